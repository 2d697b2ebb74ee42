import { loadConfigOrExit } from '@matchplane/config';
import { exitOnUsageError, settleExitCode } from '@matchplane/errors';
import { commandOrExit } from './cli-context';
import { DLQ_USAGE, parseDlqArgs } from './dlq-args.parser';
import { runDlqCommand, withActor } from './dlq.command';
import { DlqConfig } from './dlq.config';
import { jsonRenderer, tableRenderer } from './dlq.output';

const parsed = commandOrExit('dlq', DLQ_USAGE, parseDlqArgs(process.argv.slice(2)));
const config = loadConfigOrExit(DlqConfig, 'dlq');
const operation = withActor(parsed.operation, config.OPERATOR_NAME);
if (!operation) {
  exitOnUsageError(
    'dlq',
    `${parsed.operation.kind.replace('-matching', '')} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`,
    DLQ_USAGE,
  );
}
settleExitCode(
  'dlq',
  runDlqCommand(operation, config, parsed.json ? jsonRenderer : tableRenderer, {
    line: (text) => process.stdout.write(`${text}\n`),
    error: (text) => process.stderr.write(`dlq: ${text}\n`),
  }),
);
