import { loadConfigOrExit } from '@matchplane/config';
import { actorOrExit, commandOrExit, runOperatorCli } from './cli-context';
import { LIVE_OPS_USAGE, parseLiveOpsArgs } from './live-ops-args.parser';
import { executeLiveOps, liveOpsCliModule } from './live-ops.command';
import { DlqConfig } from './dlq.config';

/** `npm run live-ops`: the operator's hand on live play from a shell, audited like the admin routes. */
const { operation, json } = commandOrExit(
  'live-ops',
  LIVE_OPS_USAGE,
  parseLiveOpsArgs(process.argv.slice(2)),
);
// The operator CLIs share one configuration: the database, Redis and OPERATOR_NAME.
const config = loadConfigOrExit(DlqConfig, 'live-ops');
const actor =
  operation.kind === 'list'
    ? ''
    : actorOrExit('live-ops', LIVE_OPS_USAGE, operation, config.OPERATOR_NAME);

runOperatorCli(
  'live-ops',
  config,
  (dataSource) => liveOpsCliModule(config, dataSource),
  (app) => executeLiveOps(app, operation, actor, json),
);
