import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './processes';

export interface DelayProxyProcess {
  readonly port: number;
  readonly addedRttMs: number;
  close(): Promise<void>;
}

/**
 * The delaying TCP proxy of apps/demo/src/delay-proxy.ts started as its own process from dist/ (the
 * e2e setup builds it): in the test's process its timers would wait on the test's own work.
 */
export async function startDelayProxyProcess(options: {
  targetPort: number;
  targetHost?: string;
  addedRttMs: number;
}): Promise<DelayProxyProcess> {
  const child = spawn(
    process.execPath,
    [
      path.join(REPO_ROOT, 'dist/apps/demo/src/delay-proxy.main.js'),
      `${options.targetHost ?? '127.0.0.1'}:${options.targetPort}`,
      String(options.addedRttMs),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /\{"port":(\d+)/.exec(output);
      if (line) resolve(Number(line[1]));
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`delay proxy exited (${code}): ${output}`)));
  });
  return {
    port,
    addedRttMs: options.addedRttMs,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
