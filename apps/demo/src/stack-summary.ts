import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NOTIFICATIONS_PATH } from '@matchplane/contracts';
import { sleep } from './stack-child';

/** One app `npm run stack` waits for, and the URL that answers 200 once it is up. */
export interface HealthTarget {
  readonly name: string;
  readonly healthUrl: string;
}

export interface StackEndpoints {
  /** Where a browser or an SDK on this machine reaches the API (http://127.0.0.1:3000). */
  readonly apiUrl: string;
  /** Each region's probe edge endpoints, as PROBE_EDGES lists them. */
  readonly probeEdges: readonly { region: string; endpoints: readonly string[] }[];
  /** Worker apps by name with their health port. */
  readonly workers: readonly { name: string; healthPort: number }[];
  /** The development operator token the stack made, or undefined when OPERATOR_TOKENS was given. */
  readonly devOperatorToken: string | undefined;
}

/** Every app's health URL: the API's /health, each worker's and each edge's (http) /live. */
export function healthTargets(stack: StackEndpoints): HealthTarget[] {
  return [
    { name: 'api', healthUrl: `${stack.apiUrl}/health` },
    ...stack.workers.map(({ name, healthPort }) => ({
      name,
      healthUrl: `http://127.0.0.1:${healthPort}/health`,
    })),
    ...stack.probeEdges.flatMap(({ region, endpoints }) =>
      endpoints
        .filter((url) => url.startsWith('http'))
        .slice(0, 1)
        .map((url) => ({ name: `edge ${region}`, healthUrl: `${url.replace(/\/+$/, '')}/live` })),
    ),
  ];
}

async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Waits until every target answers 200, saying which are still starting every `progressEveryMs`
 * (an app that never comes up is named there, again and again, next to its own error lines).
 */
export async function waitUntilHealthy(
  targets: readonly HealthTarget[],
  options: { progressEveryMs: number; progress: (line: string) => void },
): Promise<void> {
  const started = Date.now();
  let nextProgress = started + options.progressEveryMs;
  let waiting = [...targets];
  for (;;) {
    const up = await Promise.all(waiting.map((target) => answers200(target.healthUrl)));
    waiting = waiting.filter((_, index) => !up[index]);
    if (waiting.length === 0) return;
    if (Date.now() >= nextProgress) {
      const names = waiting.map((target) => target.name).join(', ');
      options.progress(`still starting (${Math.round((Date.now() - started) / 1000)} s): ${names}`);
      nextProgress += options.progressEveryMs;
    }
    await sleep(250);
  }
}

/** The one summary `npm run stack` prints once every app is healthy. */
export function formatSummary(stack: StackEndpoints, elapsedMs: number): string {
  const socketUrl = `${stack.apiUrl.replace(/^http/, 'ws')}/v1/${NOTIFICATIONS_PATH}`;
  const apps = healthTargets(stack).length;
  const rows: [string, string][] = [
    ['API', `${stack.apiUrl}/v1`],
    ['OpenAPI', `${stack.apiUrl}/v1/openapi.json`],
    ['Socket', `${socketUrl} (notifications; docs/asyncapi.yaml)`],
    ['Console', `${stack.apiUrl}/admin`],
    [
      'Operator token',
      stack.devOperatorToken === undefined
        ? 'from OPERATOR_TOKENS (not shown)'
        : `${stack.devOperatorToken} (development, kept in .dev/operator-tokens)`,
    ],
    ...stack.probeEdges.map(({ region, endpoints }): [string, string] => [
      `Edge ${region}`,
      endpoints.join(' '),
    ]),
    ['Workers', stack.workers.map(({ name, healthPort }) => `${name} :${healthPort}`).join(', ')],
    ['Quick start', 'docs/CLIENT-QUICKSTART.md'],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `Matchplane is up: ${apps} apps healthy in ${(elapsedMs / 1000).toFixed(1)} s`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
  ].join('\n');
}

/**
 * OPERATOR_TOKENS for a development stack: `dev=<token>` read from `file`, made (mode 0600) the
 * first time, so the console can be opened with a token that stays the same across restarts.
 */
export function devOperatorTokens(file: string): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    writeFileSync(file, `dev=${randomBytes(24).toString('base64url')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  }
  return readFileSync(file, 'utf8').trim();
}

/** The token of `dev=<token>` when OPERATOR_TOKENS is the stack's own development value. */
export function devTokenOf(operatorTokens: string | undefined, file: string): string | undefined {
  if (operatorTokens === undefined || !existsSync(file)) return undefined;
  const own = readFileSync(file, 'utf8').trim();
  return operatorTokens === own ? own.slice(own.indexOf('=') + 1) : undefined;
}
