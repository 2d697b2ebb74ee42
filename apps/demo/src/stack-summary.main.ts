import { loadConfig, parseProbeEdges } from '@matchplane/config';
import { ApiConfig } from '../../api/src/api.config';
import { AllocatorConfig } from '../../allocator/src/allocator.config';
import { DispatcherConfig } from '../../dispatcher/src/dispatcher.config';
import { MaintenanceConfig } from '../../maintenance/src/maintenance.config';
import { MatcherConfig } from '../../matcher/src/matcher.config';
import {
  devOperatorTokens,
  devTokenOf,
  formatSummary,
  healthTargets,
  waitUntilHealthy,
} from './stack-summary';

/*
 * `npm run stack`'s summary: waits until the API, every worker and every probe edge answer their
 * health URL, then prints one block (URLs, the OpenAPI and socket endpoints, the development
 * operator token, the console). `--operator-tokens <file>` instead prints the OPERATOR_TOKENS value
 * of a development stack (made once in <file>, mode 0600).
 */
const OPERATOR_TOKENS_FILE = '.dev/operator-tokens';
const USAGE = 'usage: stack-summary.main.js [--operator-tokens <file>]';

async function main(args: readonly string[]): Promise<void> {
  if (args[0] === '--operator-tokens') {
    if (args.length !== 2) throw new Error(USAGE);
    process.stdout.write(`${devOperatorTokens(args[1]!)}\n`);
    return;
  }
  if (args.length > 0) throw new Error(USAGE);
  const env = process.env;
  // The same defaults the apps read: the stack gives every app one environment.
  const api = loadConfig(ApiConfig, { ...env, LOG_LEVEL: 'silent' });
  const stack = {
    apiUrl: `http://127.0.0.1:${api.API_PORT}`,
    probeEdges: api.PROBE_EDGES === undefined ? [] : parseProbeEdges(api.PROBE_EDGES),
    workers: [
      { name: 'dispatcher', healthPort: new DispatcherConfig().HEALTH_PORT },
      { name: 'matcher', healthPort: new MatcherConfig().HEALTH_PORT },
      { name: 'allocator', healthPort: new AllocatorConfig().HEALTH_PORT },
      { name: 'maintenance', healthPort: new MaintenanceConfig().HEALTH_PORT },
    ],
    devOperatorToken: devTokenOf(env.OPERATOR_TOKENS, OPERATOR_TOKENS_FILE),
  };
  const started = Date.now();
  await waitUntilHealthy(healthTargets(stack), {
    progressEveryMs: 10_000,
    progress: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(formatSummary(stack, Date.now() - started));
  // Stays up beside the apps: `concurrently --kill-others` stops the whole stack when one exits.
  setInterval(() => undefined, 2 ** 30);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`stack: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
