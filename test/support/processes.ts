import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');

export type AppName = 'api' | 'dispatcher' | 'matcher' | 'allocator' | 'maintenance' | 'game-server' | 'migrate';

export function appEntry(app: AppName): string {
  return path.join(REPO_ROOT, 'dist/apps', app, 'src/main.js');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningApp {
  name: AppName;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (or the given signal) and wait for exit; resolves with the exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  exited: Promise<number | string>;
}

/** Starts one app from dist/ with the given environment (on top of a minimal base). */
export function startApp(name: AppName, env: Record<string, string>, args: string[] = []): RunningApp {
  const child = spawn(process.execPath, [appEntry(name), ...args], {
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
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`);
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
