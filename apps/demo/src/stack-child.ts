import type { ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import type { StackApp } from './failure';

/** Lines of each child's output kept in memory for a failure report (the log file has all). */
const LINES_KEPT = 400;

/** One running app: its process, its last lines, how it ended. */
export class StackChild {
  readonly exited: Promise<number | string>;
  private readonly lines: string[] = [];
  private readonly watchers: ((line: string) => void)[] = [];
  private partial = '';
  private readonly log: WriteStream;
  stopping = false;

  constructor(
    readonly app: StackApp,
    readonly child: ChildProcess,
    logFile: string,
    private readonly echo: boolean,
  ) {
    this.log = createWriteStream(logFile, { flags: 'w' });
    child.stdout?.on('data', (chunk: Buffer) => this.take(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.take(chunk));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (this.partial) this.keep(this.partial);
        this.partial = '';
        this.log.end();
        resolve(code ?? signal ?? 'unknown');
      }),
    );
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  tail(count: number): string[] {
    return this.lines.slice(-count);
  }

  /** SIGKILL to the whole process group (the app and any game servers it launched). */
  killGroup(): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private take(chunk: Buffer): void {
    this.log.write(chunk);
    const text = this.partial + chunk.toString('utf8');
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.keep(line);
  }

  /** Calls `watcher` with every later line of output. */
  watch(watcher: (line: string) => void): void {
    this.watchers.push(watcher);
  }

  private keep(line: string): void {
    for (const watcher of this.watchers) watcher(line);
    this.lines.push(line);
    if (this.lines.length > LINES_KEPT) this.lines.splice(0, this.lines.length - LINES_KEPT);
    if (this.echo) process.stderr.write(`  [${this.app}] ${line}\n`);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
