import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export type AppName =
  | 'api'
  | 'dispatcher'
  | 'matcher'
  | 'allocator'
  | 'maintenance'
  | 'game-server'
  | 'migrate'
  | 'probe-edge';

export function appEntry(app: AppName): string {
  return path.join(REPO_ROOT, 'dist/apps', app, 'src/main.js');
}

/**
 * Ports handed to apps under test lie below the kernel's ephemeral range. A port that listen(0)
 * picked lies inside it, and any outgoing connection of the machine (a test's to PostgreSQL or
 * Redis) could take it before the app bound it: EADDRINUSE in a clean-clone CI run.
 */
function listenPortRange(): { min: number; max: number } {
  let ephemeralLow = 32_768;
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    if (Number(low) > 2_048) ephemeralLow = Number(low);
  } catch {
    // Not Linux: its usual range.
  }
  return { min: Math.max(1_024, ephemeralLow - 12_000), max: ephemeralLow - 1 };
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const { min, max } = listenPortRange();
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${min}-${max} after 100 tries`);
}

export interface RunningApp {
  name: AppName | 'cli';
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (or the given signal) and wait for exit; resolves with the exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  exited: Promise<number | string>;
}

/** Starts one app from dist/ with the given environment (on top of a minimal base). */
export function startApp(
  name: AppName,
  env: Record<string, string>,
  args: string[] = [],
): RunningApp {
  return startScript(name, appEntry(name), env, args);
}

/**
 * The real dispatcher plus the delivery suites' sink (test/dispatcher-sink: it publishes the test
 * aggregates' ticket events, which no production subscriber does), built with the apps.
 */
export function startSinkDispatcher(env: Record<string, string>): RunningApp {
  const entry = path.join(REPO_ROOT, 'dist/test/dispatcher-sink/sink-dispatcher.main.js');
  return startScript('dispatcher', entry, env, []);
}

function startScript(
  name: AppName | 'cli',
  entry: string,
  env: Record<string, string>,
  args: string[],
): RunningApp {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    name,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs a one-shot app to completion. */
export async function runApp(
  name: AppName,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | string; output: string }> {
  const app = startApp(name, env, args);
  const code = await app.exited;
  return { code, output: app.output() };
}

/** Runs an operator CLI from dist/ (`entry` relative to the repository, e.g. dist/apps/api/src/cli/dlq.main.js). */
export async function runCli(
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | string; output: string }> {
  const cli = startScript('cli', path.join(REPO_ROOT, entry), env, args);
  const code = await cli.exited;
  return { code, output: cli.output() };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  { timeoutMs = 20_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
  );
}

/**
 * The matcher from dist/ on `env`, passing every 100 ms under limits wide enough for local probes
 * (a few ms, but a loaded machine can stretch one past a tight limit), pushed onto `running`;
 * resolves with its health listener's URL once that answers.
 */
export async function startQuickMatcher(
  env: Record<string, string>,
  running: RunningApp[],
): Promise<string> {
  const healthPort = await freePort();
  running.push(
    startApp('matcher', {
      ...env,
      HEALTH_PORT: String(healthPort),
      MATCHER_PASS_INTERVAL_MS: '100',
      MATCH_WIDENING: '0:400:100,10000:1000:200',
    }),
  );
  const url = `http://127.0.0.1:${healthPort}`;
  await waitForHttp(`${url}/health`);
  return url;
}

/**
 * The API from dist/ on `env` (plus `apiEnv`, for what only the API reads) on a free port, pushed
 * onto `running`; resolves with its base URL once /health answers.
 */
export async function startQuickApi(
  env: Record<string, string>,
  running: RunningApp[],
  apiEnv: Record<string, string> = {},
): Promise<string> {
  const apiPort = await freePort();
  running.push(startApp('api', { ...env, ...apiEnv, API_PORT: String(apiPort) }));
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  await waitForHttp(`${baseUrl}/health`);
  return baseUrl;
}

/** Polls an HTTP URL until it answers with the expected status; returns the parsed JSON body. */
export function waitForHttp(url: string, status = 200, timeoutMs = 20_000): Promise<unknown> {
  return waitFor(
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return response.status === status ? await response.json() : undefined;
    },
    { timeoutMs, what: `${url} to answer ${status}` },
  );
}
