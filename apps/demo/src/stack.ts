import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DemoFailure, STACK_APPS, type StackApp } from './failure';
import { freePort, sleep, StackChild } from './stack-child';
import type { Timeline } from './timeline';

/** The repository root, from dist/apps/demo/src/ (compiled) or apps/demo/src/ (ts-node). */
export const REPO_ROOT = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../../..' : '../../..',
);

export const ENTRY: Record<StackApp | 'migrate' | 'dev-keys', string> = {
  api: 'dist/apps/api/src/main.js',
  dispatcher: 'dist/apps/dispatcher/src/main.js',
  matcher: 'dist/apps/matcher/src/main.js',
  allocator: 'dist/apps/allocator/src/main.js',
  maintenance: 'dist/apps/maintenance/src/main.js',
  migrate: 'dist/apps/migrate/src/main.js',
  'dev-keys': 'dist/apps/allocator/src/dev-keys.main.js',
  edges: 'dist/apps/probe-edge/src/local-edges.main.js',
};

const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const JOIN_KEY_ID = 'dev-1';
const PROBE_KEY_ID = 'dev-1';

export interface StackOptions {
  /** Recreated at every run: it must be the demo's own (its name must contain "demo"). */
  databaseName: string;
  /** Keys under it are deleted at every run (it must contain "demo"). */
  redisPrefix: string;
  /** Where the join key set is kept (made once by dev-keys, reused after). */
  keysFile: string;
  /** Where the probe key set (edges sign, the API verifies) is kept, made and reused alike. */
  probeKeysFile: string;
  /** The regions players probe and matches are placed in: one probe edge each. */
  regions: readonly string[];
  /** Each app's whole output goes to `<logDir>/<app>.log`. */
  logDir: string;
  /** Extra environment of the game servers the allocator's local provider launches. */
  gameServerEnv: Readonly<Record<string, string>>;
  /** Extra environment of every app (e.g. QUEUE_MODES, which they share). */
  serviceEnv?: Readonly<Record<string, string>>;
  /** Every service's TICKET_HEARTBEAT_INTERVAL_MS (the timeout is 5x). */
  heartbeatIntervalMs: number;
  /** Also echo every app's output to stderr, prefixed with its name. */
  echoLogs: boolean;
}

export interface ChildExit {
  readonly app: StackApp;
  /** The exit code, or the signal that ended it. */
  readonly status: number | string;
  /** It had to be SIGKILLed after the grace period. */
  readonly killed: boolean;
}

/**
 * The whole control plane as child processes the demo owns: its own database (recreated), its own
 * Redis key prefix (cleared), free ports, the allocator on the local provider. Children run in
 * their own process groups, so a Ctrl-C reaches the demo only and the demo stops them in order
 * (SIGTERM, then SIGKILL after a grace period); the allocator stops its game servers itself.
 */
export class DemoStack {
  private readonly children = new Map<StackApp, StackChild>();
  private apiPort = 0;
  private edgeBasePort = 0;
  private stopping = false;
  private unexpectedExit: ((failure: DemoFailure) => void) | undefined;

  constructor(
    private readonly options: StackOptions,
    private readonly timeline: Timeline,
  ) {
    for (const [what, value] of [
      ['database name', options.databaseName],
      ['Redis key prefix', options.redisPrefix],
    ] as const) {
      if (!value.includes('demo'))
        throw new DemoFailure(
          `the ${what} "${value}" must contain "demo": the demo wipes it at every run`,
        );
    }
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(options.databaseName))
      throw new DemoFailure(`the database name must be a lowercase identifier`);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.redisPrefix))
      throw new DemoFailure(`the Redis key prefix must be 1-64 letters, digits, "_" or "-"`);
  }

  /** How many apps were started (running or not). */
  get started(): number {
    return this.children.size;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  /**
   * Each region's probe edge (HTTP), as the API lists it in the queue options; local-edges puts
   * region i on the base port + i.
   */
  get edgeUrls(): Readonly<Record<string, string>> {
    return Object.fromEntries(
      this.options.regions.map((region, i) => [
        region,
        `http://127.0.0.1:${this.edgeBasePort + i}`,
      ]),
    );
  }

  /** Called once if an app exits while the demo did not ask it to. */
  onUnexpectedExit(handler: (failure: DemoFailure) => void): void {
    this.unexpectedExit = handler;
  }

  /** A fresh database with every migration, a clean key prefix, and a join key set. */
  async prepare(): Promise<void> {
    mkdirSync(this.options.logDir, { recursive: true });
    await this.resetDatabase();
    await this.resetRedis();
    await this.runOnce('migrate', []);
    this.timeline.note('stack', `migrated database ${this.options.databaseName}`);
    const keys = await this.runOnce('dev-keys', [this.options.keysFile, JOIN_KEY_ID]);
    this.timeline.note('stack', keys.trim().replace(/^dev-keys: /, 'join keys: '));
    const probeKeys = await this.runOnce('dev-keys', [this.options.probeKeysFile, PROBE_KEY_ID]);
    this.timeline.note('stack', probeKeys.trim().replace(/^dev-keys: /, 'probe keys: '));
  }

  /** Starts every app on free ports and waits until each one's /health answers 200. */
  async start(): Promise<void> {
    this.apiPort = await freePort();
    // The edges take this port and the next ones (HTTP), and 100 above (UDP).
    this.edgeBasePort = await freePort();
    const healthPorts = new Map<StackApp, number>();
    for (const app of STACK_APPS)
      healthPorts.set(
        app,
        app === 'api' ? this.apiPort : app === 'edges' ? this.edgeBasePort : await freePort(),
      );
    const probeKeys = { PROBE_KEYS_FILE: this.options.probeKeysFile };

    const gameEnv = Object.entries(this.options.gameServerEnv)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    const perApp: Record<StackApp, Record<string, string>> = {
      api: {
        API_HOST: '127.0.0.1',
        API_PORT: String(this.apiPort),
        PROBE_EDGES: Object.entries(this.edgeUrls)
          .map(([region, url]) => `${region}=${url}`)
          .join(','),
        ...probeKeys,
      },
      dispatcher: {},
      matcher: {},
      allocator: {
        JOIN_KEYS_FILE: this.options.keysFile,
        JOIN_ACTIVE_KEY_ID: JOIN_KEY_ID,
        ALLOCATION_PROVIDER: 'local',
        ALLOCATOR_API_URL: this.apiUrl,
        LOCAL_SERVER_HOST: '127.0.0.1',
        LOCAL_SERVER_OUTPUT: 'inherit',
        ...(gameEnv ? { LOCAL_SERVER_ENV: gameEnv } : {}),
      },
      maintenance: {},
      edges: {
        PROBE_EDGE_BASE_PORT: String(this.edgeBasePort),
        PROBE_ACTIVE_KEY_ID: PROBE_KEY_ID,
        ...probeKeys,
      },
    };
    for (const app of STACK_APPS) {
      const env = {
        ...this.baseEnv(),
        ...(app === 'api' || app === 'edges'
          ? {}
          : { HEALTH_HOST: '127.0.0.1', HEALTH_PORT: String(healthPorts.get(app)) }),
        ...perApp[app],
      };
      this.spawnApp(app, env);
    }
    const ports = STACK_APPS.map((app) => `${app} :${healthPorts.get(app)}`).join(', ');
    this.timeline.note(
      'stack',
      `started ${STACK_APPS.length} apps (${ports}); logs in ${this.options.logDir}`,
    );
    await Promise.all(STACK_APPS.map((app) => this.waitHealthy(app, healthPorts.get(app)!)));
    this.timeline.note('stack', `all apps healthy; API at ${this.apiUrl}`);
  }

  /** The last `count` lines `app` wrote (the allocator's include its game servers'). */
  tail(app: StackApp, count = 40): string[] {
    return this.children.get(app)?.tail(count) ?? [];
  }

  /** Calls `watcher` with each line `app` writes from now on (the allocator's include its game servers'). */
  watch(app: StackApp, watcher: (line: string) => void): void {
    this.children.get(app)?.watch(watcher);
  }

  logFile(app: StackApp): string {
    return path.join(this.options.logDir, `${app}.log`);
  }

  /** SIGTERM to every app at once; SIGKILL (whole process group) to any still running after the grace period. */
  async stop(graceMs = STOP_GRACE_MS): Promise<ChildExit[]> {
    this.stopping = true;
    const running = [...this.children.values()];
    for (const child of running) {
      child.stopping = true;
      if (child.alive) child.child.kill('SIGTERM');
    }
    return Promise.all(
      running.map(async (child) => {
        let killed = false;
        const timer = setTimeout(() => {
          if (!child.alive) return;
          killed = true;
          child.killGroup();
        }, graceMs);
        const status = await child.exited;
        clearTimeout(timer);
        return { app: child.app, status, killed };
      }),
    );
  }

  /** Last resort at process exit: SIGKILL whatever still runs, game servers included. */
  killAll(): void {
    for (const child of this.children.values()) if (child.alive) child.killGroup();
  }

  // ---- Internals ----------------------------------------------------------------------------

  /** The caller's environment (database and Redis connection settings apply), made the demo's. */
  private baseEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env))
      if (value !== undefined) env[key] = value;
    return {
      ...env,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'pretty',
      DATABASE_NAME: this.options.databaseName,
      REDIS_KEY_PREFIX: this.options.redisPrefix,
      PROBE_REGIONS: this.options.regions.join(','),
      TICKET_HEARTBEAT_INTERVAL_MS: String(this.options.heartbeatIntervalMs),
      TICKET_HEARTBEAT_TIMEOUT_MS: String(this.options.heartbeatIntervalMs * 5),
      ...this.options.serviceEnv,
    };
  }

  private spawnApp(app: StackApp, env: Record<string, string>): void {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, ENTRY[app])], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: the terminal's Ctrl-C goes to the demo, which stops it in order.
      detached: true,
    });
    const handle = new StackChild(app, child, this.logFile(app), this.options.echoLogs);
    this.children.set(app, handle);
    void handle.exited.then((status) => {
      if (this.stopping || handle.stopping) return;
      this.unexpectedExit?.(new DemoFailure(`${app} exited unexpectedly (${status})`, app));
    });
  }

  private async waitHealthy(app: StackApp, port: number): Promise<void> {
    const deadline = Date.now() + HEALTH_TIMEOUT_MS;
    const child = this.children.get(app)!;
    let last = 'no answer yet';
    while (Date.now() < deadline) {
      if (!child.alive)
        throw new DemoFailure(`${app} exited while starting (${await child.exited})`, app);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`, {
          signal: AbortSignal.timeout(1_000),
        });
        if (response.status === 200) {
          this.timeline.note('stack', `${app} healthy`);
          return;
        }
        last = `${response.status} ${(await response.text()).slice(0, 200)}`;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await sleep(200);
    }
    throw new DemoFailure(
      `${app} was not healthy within ${HEALTH_TIMEOUT_MS} ms (last: ${last})`,
      app,
    );
  }

  /** Runs a one-shot script of dist/ to completion; its output, or a DemoFailure with it. */
  private runOnce(what: 'migrate' | 'dev-keys', args: string[]): Promise<string> {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, ENTRY[what]), ...args], {
      cwd: REPO_ROOT,
      env: this.baseEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    return new Promise((resolve, reject) => {
      child.once('error', (error) =>
        reject(new DemoFailure(`${what} did not start: ${error.message}`)),
      );
      child.once('exit', (code, signal) => {
        if (code === 0) return resolve(output);
        const tail = output.trimEnd().split('\n').slice(-20).join('\n  ');
        reject(new DemoFailure(`${what} failed (${code ?? signal}):\n  ${tail}`));
      });
    });
  }

  private async resetDatabase(): Promise<void> {
    const client = new Client({
      host: process.env.DATABASE_HOST || '127.0.0.1',
      port: Number(process.env.DATABASE_PORT || 5432),
      user: process.env.DATABASE_USER || 'postgres',
      password: process.env.DATABASE_PASSWORD || undefined,
      database: process.env.DATABASE_ADMIN_NAME || 'postgres',
      connectionTimeoutMillis: 5_000,
    });
    try {
      await client.connect();
      // FORCE (PostgreSQL 13+) ends the sessions of an earlier demo that did not stop.
      await client.query(`DROP DATABASE IF EXISTS "${this.options.databaseName}" WITH (FORCE)`);
    } catch (error) {
      throw new DemoFailure(
        `could not reset database ${this.options.databaseName} on PostgreSQL ${client.host}:${client.port}: ${(error as Error).message}`,
      );
    } finally {
      await client.end().catch(() => undefined);
    }
    this.timeline.note(
      'stack',
      `dropped database ${this.options.databaseName} (a fresh one per run)`,
    );
  }

  private async resetRedis(): Promise<void> {
    const redis = new Redis({
      host: process.env.REDIS_HOST || '127.0.0.1',
      port: Number(process.env.REDIS_PORT || 6379),
      password: process.env.REDIS_PASSWORD || undefined,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    let deleted = 0;
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(
          cursor,
          'MATCH',
          `${this.options.redisPrefix}:*`,
          'COUNT',
          1000,
        );
        cursor = next;
        if (keys.length > 0) deleted += await redis.del(...keys);
      } while (cursor !== '0');
    } catch (error) {
      throw new DemoFailure(
        `could not clear Redis prefix ${this.options.redisPrefix}: ${(error as Error).message}`,
      );
    } finally {
      redis.disconnect();
    }
    this.timeline.note(
      'stack',
      `cleared Redis prefix ${this.options.redisPrefix} (${deleted} keys)`,
    );
  }
}
