import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { freePort, REPO_ROOT, sleep, startNodeChild } from '../bench/bench.processes';
import type { StackApp } from '../../apps/demo/src/failure';
import { ENTRY } from '../../apps/demo/src/stack';

/*
 * The whole control plane as child processes of the chaos run: two API replicas, two
 * dispatchers, the matcher (two in the HA topology), the allocator (local provider: game servers are its children) and
 * maintenance. Each instance can be SIGKILLed and started again on the same ports.
 */

/** The same apps as the demo's stack, some of them in two replicas here. */
export type ChaosAppKind = StackApp;

const HEALTH_TIMEOUT_MS = 90_000;
const JOIN_KEY_ID = 'chaos-1';

export interface ChaosStackOptions {
  /**
   * How the apps reach PostgreSQL and Redis: DATABASE_HOST/PORT/USER/NAME and REDIS_HOST/PORT,
   * or the HA topology's DATABASE_URL and REDIS_SENTINELS (ChaosTopology.connectionEnv).
   */
  connectionEnv: Readonly<Record<string, string>>;
  /** How many matcher processes (the HA topology's share a mode's shards). */
  matchers: number;
  redisPrefix: string;
  /** Logs, the join key set. */
  workDir: string;
  /** Extra environment of every app (timings scaled down for a short run). */
  env: Readonly<Record<string, string>>;
  /** Extra environment of the game servers the local provider launches. */
  gameServerEnv: Readonly<Record<string, string>>;
}

/** One app instance ("api#0", "dispatcher#1", ...): its ports and its current process. */
export class ChaosInstance {
  child: ChildProcess | undefined;
  /** Process groups this instance has had (its game servers live in them): killed at teardown. */
  readonly groups: number[] = [];
  /** Exits nobody asked for (a crash the chaos run did not cause). */
  unexpectedExits: string[] = [];
  private expectingExit = false;
  private starts = 0;

  constructor(
    readonly kind: ChaosAppKind,
    readonly index: number,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {}

  get name(): string {
    return `${this.kind}#${this.index}`;
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    this.starts += 1;
    const log: WriteStream = createWriteStream(
      path.join(this.logDir, `${this.kind}-${this.index}.log`),
      { flags: 'a' },
    );
    log.write(`--- start ${this.starts} at ${new Date().toISOString()} ---\n`);
    // Its own process group, so a SIGKILL of the app leaves its game servers running (as a
    // crashed allocator would) and teardown can still find them.
    const child = spawn(process.execPath, [path.join(REPO_ROOT, ENTRY[this.kind])], {
      cwd: REPO_ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    if (child.pid !== undefined) this.groups.push(child.pid);
    this.expectingExit = false;
    child.once('exit', (code, signal) => {
      log.end(`--- exit ${code ?? signal} at ${new Date().toISOString()} ---\n`);
      if (!this.expectingExit)
        this.unexpectedExits.push(`${this.name} exited on its own (${code ?? signal})`);
    });
    this.child = child;
  }

  /** SIGKILL the app alone (not its game servers); resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    this.expectingExit = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    this.expectingExit = true;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** Last resort: SIGKILL every process group this instance ever had. */
  killGroups(): void {
    if (this.child && this.alive) this.expectingExit = true;
    for (const group of this.groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }

  /** Polls /health until 200; resolves with how long it took. */
  async waitHealthy(timeoutMs = HEALTH_TIMEOUT_MS): Promise<number> {
    const started = Date.now();
    let last = 'no answer';
    while (Date.now() - started < timeoutMs) {
      if (!this.alive) throw new Error(`${this.name} exited while starting`);
      try {
        const response = await fetch(`http://127.0.0.1:${this.port}/health`, {
          signal: AbortSignal.timeout(1_000),
        });
        if (response.status === 200) return Date.now() - started;
        last = `${response.status}`;
      } catch (error) {
        last = (error as Error).message;
      }
      await sleep(100);
    }
    throw new Error(`${this.name} not healthy within ${timeoutMs} ms (last: ${last})`);
  }
}

export class ChaosStack {
  readonly instances: ChaosInstance[] = [];

  private constructor(private readonly options: ChaosStackOptions) {}

  static async create(options: ChaosStackOptions): Promise<ChaosStack> {
    const stack = new ChaosStack(options);
    mkdirSync(path.join(options.workDir, 'logs'), { recursive: true });
    const layout: [ChaosAppKind, number][] = [
      ['api', 2],
      ['dispatcher', 2],
      ['matcher', options.matchers],
      ['allocator', 1],
      ['maintenance', 1],
    ];
    // Each port is free when asked for but only bound when its app starts, so the OS may hand
    // the same one out twice: two apps on one port would crash-loop one and fool its health check.
    const ports: number[] = [];
    const total = layout.reduce((sum, [, count]) => sum + count, 0);
    while (ports.length < total) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const apiPorts = ports.slice(0, 2);
    let next = 0;
    for (const [kind, count] of layout) {
      for (let index = 0; index < count; index += 1) {
        const port = ports[next++]!;
        stack.instances.push(
          new ChaosInstance(
            kind,
            index,
            port,
            stack.envFor(kind, port, apiPorts[0]!),
            path.join(options.workDir, 'logs'),
          ),
        );
      }
    }
    return stack;
  }

  get apiUrls(): string[] {
    return this.instances
      .filter((instance) => instance.kind === 'api')
      .map((instance) => `http://127.0.0.1:${instance.port}`);
  }

  get keysFile(): string {
    return path.join(this.options.workDir, 'join-keys.json');
  }

  /** Migrations and the join key set. */
  async prepare(): Promise<void> {
    await this.runOnce('migrate', []);
    await this.runOnce('dev-keys', [this.keysFile, JOIN_KEY_ID]);
  }

  async startAll(): Promise<void> {
    for (const instance of this.instances) instance.start();
    await Promise.all(this.instances.map((instance) => instance.waitHealthy()));
  }

  find(name: string): ChaosInstance | undefined {
    return this.instances.find((instance) => instance.name === name);
  }

  unexpectedExits(): string[] {
    return this.instances.flatMap((instance) => instance.unexpectedExits);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.stop()));
    this.killAll();
  }

  killAll(): void {
    for (const instance of this.instances) instance.killGroups();
  }

  private baseEnv(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATABASE_ADMIN_NAME: 'postgres',
      ...this.options.connectionEnv,
      REDIS_KEY_PREFIX: this.options.redisPrefix,
      ...this.options.env,
    };
  }

  private envFor(
    kind: ChaosAppKind,
    port: number,
    gameServerApiPort: number,
  ): Record<string, string> {
    const base = this.baseEnv();
    if (kind === 'api') return { ...base, API_HOST: '127.0.0.1', API_PORT: String(port) };
    const health = { ...base, HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(port) };
    if (kind !== 'allocator') return health;
    const gameEnv = Object.entries(this.options.gameServerEnv)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    return {
      ...health,
      JOIN_KEYS_FILE: this.keysFile,
      JOIN_ACTIVE_KEY_ID: JOIN_KEY_ID,
      ALLOCATION_PROVIDER: 'local',
      ALLOCATOR_API_URL: `http://127.0.0.1:${gameServerApiPort}`,
      LOCAL_SERVER_HOST: '127.0.0.1',
      LOCAL_SERVER_OUTPUT: 'inherit',
      ...(gameEnv ? { LOCAL_SERVER_ENV: gameEnv } : {}),
    };
  }

  private async runOnce(what: 'migrate' | 'dev-keys', args: string[]): Promise<void> {
    const child = startNodeChild(what, ENTRY[what], args, this.baseEnv());
    const code = await child.exited;
    if (code !== 0)
      throw new Error(`${what} failed (${code}): ${child.output().trim().slice(-2_000)}`);
  }
}
