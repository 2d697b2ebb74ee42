import { loadConfigOrExit } from '@matchplane/config';
import { CliExitCode, exitCodeOf, exitOnUsageError } from '@matchplane/errors';
import { DLQ_USAGE, parseDlqArgs } from './dlq-args.parser';
import { runDlqCommand, withActor } from './dlq.command';
import { DlqConfig } from './dlq.config';
import { jsonRenderer, tableRenderer } from './dlq.output';

function usageError(problem: string): never {
  exitOnUsageError('dlq', problem, DLQ_USAGE);
}

const parsed = parseDlqArgs(process.argv.slice(2));
if (!parsed.ok) usageError(parsed.problem);
if (parsed.help) {
  process.stdout.write(`${DLQ_USAGE}\n`);
  process.exit(CliExitCode.OK);
}
const config = loadConfigOrExit(DlqConfig, 'dlq');
const operation = withActor(parsed.operation, config.OPERATOR_NAME);
if (!operation) {
  usageError(
    `${parsed.operation.kind.replace('-matching', '')} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`,
  );
}
runDlqCommand(operation, config, parsed.json ? jsonRenderer : tableRenderer, {
  line: (text) => process.stdout.write(`${text}\n`),
  error: (text) => process.stderr.write(`dlq: ${text}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `dlq: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = exitCodeOf(error);
  },
);
