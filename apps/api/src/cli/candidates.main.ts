import { loadConfigOrExit, ServiceConfig } from '@matchplane/config';
import { CliExitCode, exitCodeOf, exitOnUsageError } from '@matchplane/errors';
import { rebuildCandidates } from './candidates.command';

const USAGE =
  'usage: npm run candidates -- rebuild\nRebuilds the Redis candidate projection from PostgreSQL.';

const [command, ...rest] = process.argv.slice(2);
if (command === '--help' || command === '-h') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(CliExitCode.OK);
}
if (command !== 'rebuild' || rest.length > 0) {
  exitOnUsageError(
    'candidates',
    `unknown command ${JSON.stringify(process.argv.slice(2).join(' '))}`,
    USAGE,
  );
}
const config = loadConfigOrExit(ServiceConfig, 'candidates');
rebuildCandidates(config).then(
  (outcome) => process.stdout.write(`${JSON.stringify({ rebuilt: true, ...outcome })}\n`),
  (error: unknown) => {
    process.stderr.write(`candidates: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = exitCodeOf(error);
  },
);
