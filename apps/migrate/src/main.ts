import { loadConfigOrExit } from '@matchplane/config';
import { MigrateConfig } from './migrate.config';
import { MIGRATE_USAGE, parseMigrateArgs } from './migrate-args.parser';
import { runMigrateCommand } from './migrate.command';

const parsed = parseMigrateArgs(process.argv.slice(2));
if (!parsed.ok) {
  process.stderr.write(`migrate: ${parsed.problem}\n${MIGRATE_USAGE}\n`);
  process.exit(2);
}
if (parsed.command.kind === 'help') {
  process.stdout.write(`${MIGRATE_USAGE}\n`);
  process.exit(0);
}
const config = loadConfigOrExit(MigrateConfig, 'migrate');
runMigrateCommand(parsed.command, config, {
  line: (text) => process.stdout.write(`migrate: ${text}\n`),
  error: (text) => process.stderr.write(`migrate: ${text}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `migrate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
