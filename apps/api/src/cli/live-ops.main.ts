import { loadConfigOrExit } from '@matchplane/config';
import { CliExitCode, exitOnUsageError } from '@matchplane/errors';
import { runOperatorCli } from './cli-context';
import { LIVE_OPS_USAGE, parseLiveOpsArgs } from './live-ops-args.parser';
import { executeLiveOps, liveOpsCliModule } from './live-ops.command';
import { DlqConfig } from './dlq.config';

/** `npm run live-ops`: the operator's hand on live play from a shell, audited like the admin routes. */
function usageError(problem: string): never {
  exitOnUsageError('live-ops', problem, LIVE_OPS_USAGE);
}

const parsed = parseLiveOpsArgs(process.argv.slice(2));
if (!parsed.ok) usageError(parsed.problem);
if (parsed.help) {
  process.stdout.write(`${LIVE_OPS_USAGE}\n`);
  process.exit(CliExitCode.OK);
}
// The operator CLIs share one configuration: the database, Redis and OPERATOR_NAME.
const config = loadConfigOrExit(DlqConfig, 'live-ops');
const { operation, json } = parsed;
const actor = operation.kind === 'list' ? '' : (operation.actor ?? config.OPERATOR_NAME);
if (actor === undefined) {
  usageError(`${operation.kind} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`);
}

runOperatorCli(
  'live-ops',
  config,
  (dataSource) => liveOpsCliModule(config, dataSource),
  (app) => executeLiveOps(app, operation, actor, json),
);
