import { loadConfigOrExit } from '@matchplane/config';
import { MigrateConfig } from './migrate.config';
import { CliExitCode, exitOnUsageError, settleExitCode } from '@matchplane/errors';
import { MIGRATE_USAGE, parseMigrateArgs } from './migrate-args.parser';
import { runMigrateCommand } from './migrate.command';

const parsed = parseMigrateArgs(process.argv.slice(2));
if (!parsed.ok) exitOnUsageError('migrate', parsed.problem, MIGRATE_USAGE);
if (parsed.command.kind === 'help') {
  process.stdout.write(`${MIGRATE_USAGE}\n`);
  process.exit(CliExitCode.OK);
}
const config = loadConfigOrExit(MigrateConfig, 'migrate');
settleExitCode(
  'migrate',
  runMigrateCommand(parsed.command, config, {
    line: (text) => process.stdout.write(`migrate: ${text}\n`),
    error: (text) => process.stderr.write(`migrate: ${text}\n`),
  }),
);
