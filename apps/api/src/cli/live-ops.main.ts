import { loadConfigOrExit } from '@matchplane/config';
import { CliExitCode, exitCodeOf, exitOnUsageError } from '@matchplane/errors';
import { PersistenceModule, RedisModule } from '@matchplane/persistence';
import { LiveOpsModule } from '../admin/live-ops/live-ops.module';
import { QueueControlsAdmin, type QueueControlView } from '../admin/live-ops/queue-controls.admin';
import { runCliCommand } from './cli-context';
import { LIVE_OPS_USAGE, parseLiveOpsArgs } from './live-ops-args.parser';
import { DlqConfig } from './dlq.config';

/** `npm run live-ops`: the operator's queue holds from a shell, audited like the admin routes. */
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
const actor = operation.kind === 'list' ? undefined : (operation.actor ?? config.OPERATOR_NAME);
if (operation.kind !== 'list' && actor === undefined) {
  usageError(`${operation.kind} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`);
}

function text(view: QueueControlView): string {
  if (json) return JSON.stringify(view);
  const held =
    view.state === 'OPEN'
      ? ''
      : ` since ${view.setAt} by ${view.setBy}: ${view.reason}` +
        (view.retryAfterSeconds === undefined ? '' : ` (expected ${view.retryAfterSeconds} s)`);
  return `${view.scope} ${view.name} ${view.state}${held}`;
}

runCliCommand(
  config,
  'matchplane-live-ops',
  (dataSource) => ({
    module: class LiveOpsCli {},
    imports: [
      PersistenceModule.forDataSource(dataSource),
      RedisModule.forWakeUps(config, 'matchplane-live-ops'),
      LiveOpsModule.forRoot(config),
    ],
  }),
  async (app) => {
    const controls = app.get(QueueControlsAdmin);
    if (operation.kind === 'list') {
      const held = await controls.list();
      return held.length === 0 && !json ? ['every mode and region is open'] : held.map(text);
    }
    const { kind, scope, name, reason, retryAfterSeconds } = operation;
    const view = await controls.apply(kind, { scope, name }, actor as string, {
      reason,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
    return [text(view)];
  },
  {
    line: (line) => process.stdout.write(`${line}\n`),
    error: (line) => process.stderr.write(`live-ops: ${line}\n`),
  },
).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`live-ops: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = exitCodeOf(error);
  },
);
