import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import type {
  AssignmentResponse,
  ErrorMessage,
  MatchEventMessage,
  ResyncMessage,
  SessionResponse,
  TicketResponse,
} from '@matchplane/contracts';
import {
  MatchplaneApiError,
  PlayerClient,
  type ApiEndpointsInput,
  type GameConnection,
  type GameEnded,
  type HeartbeatHandle,
  type NotificationConnectionEvent,
  type NotificationHandlers,
  type NotificationSubscription,
} from '@matchplane/sdk';
import { createTestDatabase, type TestDatabase } from './database';
import {
  appEntry,
  freePort,
  startApp,
  waitFor,
  waitForHttp,
  type AppName,
  type RunningApp,
} from './processes';
import { deleteRedisPrefix, testRedisPrefix } from './redis';

/*
 * Journeys: the whole control plane as processes from dist/ (API replicas, dispatcher, matcher,
 * allocator with the local provider, which launches the reference game server per match), and
 * players that go through it with the SDK only: sign in, probe, queue, heartbeat, follow their
 * notifications, get their assignment, join the game server, play, and see the end.
 *
 * Nothing is seeded and no step is driven by the test: every hand-off (matcher -> match row ->
 * outbox -> dispatcher -> allocation job -> allocator -> roster publish -> game server -> register
 * -> assignment -> join -> initial connect -> result) is the production one, so a missing one
 * leaves a journey unable to finish.
 *
 * Typical use (test/e2e/journey-happy-path.spec.ts):
 *
 *   const plane = useControlPlane({ apis: 2 });               // beforeAll / afterAll
 *   it('...', () => plane.diagnose(async () => {
 *     const [a, b] = await Promise.all([
 *       readyPlayer(plane.apiUrl(0), 'a'), readyPlayer(plane.apiUrl(1), 'b')]);
 *     const [ra, rb] = await Promise.all([playJourneyPlayer(a), playJourneyPlayer(b)]);
 *     a.log.assertOrdered(ra.matchId, HAPPY_PATH_STATES);
 *   }));
 *
 * `plane.diagnose` appends every process's recent output to a failure, so a journey that stalls
 * says where.
 */

// ---- Join keys ---------------------------------------------------------------------------------

export interface JoinKeys {
  /** The key-set file (`{keyId: base64Key}`), for JOIN_KEYS_FILE. */
  readonly file: string;
  readonly activeKeyId: string;
  /** Every key id in the file. */
  readonly keyIds: readonly string[];
  /** Rewrites the file with these ids (existing keys keep their bytes; new ids get fresh ones). */
  rewrite(keyIds: readonly string[], activeKeyId: string): JoinKeys;
  /** Deletes the directory holding the file. */
  remove(): void;
}

/** A fresh key set in a private temporary directory; the first id is active unless `active` says. */
export function createJoinKeys(
  keyIds: readonly string[] = ['journey-1'],
  active?: string,
): JoinKeys {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-journey-keys-'));
  const file = path.join(dir, 'join-keys.json');
  const write = (ids: readonly string[], activeKeyId: string): JoinKeys => {
    if (!ids.includes(activeKeyId)) throw new Error(`active key ${activeKeyId} is not in the set`);
    const existing: Record<string, string> = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)
      : {};
    const keys = Object.fromEntries(
      ids.map((id) => [id, existing[id] ?? randomBytes(32).toString('base64')]),
    );
    writeFileSync(file, JSON.stringify(keys), { mode: 0o600 });
    return {
      file,
      activeKeyId,
      keyIds: [...ids],
      rewrite: write,
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  };
  return write(keyIds, active ?? keyIds[0] ?? 'journey-1');
}

// ---- Processes ---------------------------------------------------------------------------------

/** One app of the control plane, across restarts: the same port, environment and label. */
export interface AppHandle {
  readonly name: AppName;
  /** e.g. `api#1`, `dispatcher#0`. */
  readonly label: string;
  /** API_PORT of an API, HEALTH_PORT of a worker. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`: the API's base URL, or the worker's health/metrics listener. */
  readonly url: string;
  /** The environment it is started with (on top of startApp's minimal base). */
  readonly env: Readonly<Record<string, string>>;
  /** The current process (the latest start). */
  current(): RunningApp;
  /** Whether the current process is still running. */
  running(): boolean;
  /** Output of every process this handle started, oldest first. */
  output(): string;
  /** Stops the current process (SIGTERM by default; SIGKILL after `graceMs`, default 10 s). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | string>;
  /** SIGKILL: a crash, no shutdown hooks. */
  kill(): Promise<number | string>;
  /** Starts a new process on the same port and environment and waits for its health. */
  start(): Promise<void>;
  /** stop(signal) then start(). */
  restart(signal?: NodeJS.Signals): Promise<void>;
}

export interface ControlPlaneOptions {
  /** API replicas (separate processes, same database and Redis prefix). Default 2. */
  apis?: number;
  /** Dispatcher replicas. Default 1. */
  dispatchers?: number;
  /** Matcher replicas. Default 1. */
  matchers?: number;
  /** Start the allocator (local provider). Default true. */
  allocator?: boolean;
  /** Start the maintenance app (retention, reconciliation). Default false. */
  maintenance?: boolean;
  /** Environment of every app, over the defaults below (e.g. TICKET_HEARTBEAT_*). */
  env?: Record<string, string>;
  /** Environment per app, over `env`. */
  appEnv?: Partial<Record<AppName, Record<string, string>>>;
  /** The game servers' variables (LOCAL_SERVER_ENV), over JOURNEY_GAME_SERVER_ENV. */
  gameServerEnv?: Record<string, string>;
  /** Which API replica the game servers report to (ALLOCATOR_API_URL). Default 0. */
  gameServerApi?: number;
  /** Key ids of the join key set (first active). Default ['journey-1']. */
  joinKeyIds?: string[];
}

/** Every app: short heartbeats, a quick matcher and relay, small pools (many processes, 2 cores). */
export const JOURNEY_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'info',
  DATABASE_POOL_SIZE: '4',
  TICKET_HEARTBEAT_INTERVAL_MS: '1000',
  TICKET_HEARTBEAT_TIMEOUT_MS: '15000',
  OUTBOX_POLL_INTERVAL_MS: '100',
  MATCHER_PASS_INTERVAL_MS: '100',
  // Local probes take a few ms, but a loaded machine can stretch one past a tight limit.
  MATCH_WIDENING: '0:400:100,10000:1000:200',
  ALLOCATION_RETRY_BASE_MS: '200',
  ALLOCATION_RETRY_CAP_MS: '2000',
};

/**
 * The launched game servers: players get `CONNECT_DEADLINE_MS` after registration to join (a
 * no-show costs that long), and a match lasts `MATCH_DURATION_MS`.
 */
export const JOURNEY_GAME_SERVER_ENV: Readonly<Record<string, string>> = {
  CONNECT_DEADLINE_MS: '6000',
  JOIN_HANDSHAKE_TIMEOUT_MS: '5000',
  MATCH_DURATION_MS: '1200',
  MATCH_TICK_INTERVAL_MS: '200',
  ROSTER_WAIT_MS: '15000',
  GAME_SERVER_IMAGE_DIGEST: 'sha256:journey',
};

export interface ControlPlane {
  readonly db: TestDatabase;
  /** A DataSource on the plane's database, for assertions (players act through the SDK only). */
  readonly ds: DataSource;
  readonly prefix: string;
  readonly keys: JoinKeys;
  readonly apis: readonly AppHandle[];
  readonly dispatchers: readonly AppHandle[];
  readonly matchers: readonly AppHandle[];
  readonly allocator: AppHandle | undefined;
  readonly maintenance: AppHandle | undefined;
  /** Every handle, in start order. */
  readonly apps: readonly AppHandle[];
  /** Base URL of API replica `index` (modulo the replica count, so `apiUrl(i)` spreads players). */
  apiUrl(index: number): string;
  /** The last `lines` lines of every app's output, labelled. */
  diagnostics(lines?: number): string;
  /** Runs `test`; a failure is rethrown with `diagnostics()` appended to its message. */
  diagnose<T>(test: () => Promise<T>): Promise<T>;
  /** Stops every app (and any game server left behind), drops the database and Redis keys. */
  close(): Promise<void>;
}

/** A game server the local provider launched, recorded in its allocation's provider_ref. */
async function leftoverGameServers(ds: DataSource): Promise<number[]> {
  const rows = await ds.query<{ pid: number | null }[]>(
    `SELECT (provider_ref->>'pid')::int AS pid FROM allocations WHERE provider = 'local'`,
  );
  return rows.flatMap((row) => {
    const pid = row.pid;
    if (pid === null || !Number.isInteger(pid)) return [];
    try {
      // Only a live process that is a game server (a pid can be reused).
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmdline.includes(path.join('apps', 'game-server')) ? [pid] : [];
    } catch {
      return [];
    }
  });
}

function handle(
  name: AppName,
  index: number,
  port: number,
  env: Record<string, string>,
  healthUrl: string,
): AppHandle {
  const label = `${name}#${index}`;
  const generations: RunningApp[] = [];
  const current = (): RunningApp => {
    const app = generations[generations.length - 1];
    if (!app) throw new Error(`${label} was never started`);
    return app;
  };
  const running = (): boolean => {
    const app = generations[generations.length - 1];
    return !!app && app.child.exitCode === null && app.child.signalCode === null;
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) => {
    const app = current();
    if (!running()) return app.exited;
    app.child.kill(signal);
    // A process stuck in its shutdown is killed after the grace period.
    const timer = setTimeout(() => app.child.kill('SIGKILL'), graceMs);
    try {
      return await app.exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const start = async () => {
    if (running()) throw new Error(`${label} is already running`);
    const app = startApp(name, env);
    generations.push(app);
    const failed = app.exited.then((code) => {
      throw new Error(
        `${label} exited (${code}) before it was healthy:\n${tail(app.output(), 30)}`,
      );
    });
    failed.catch(() => undefined);
    await Promise.race([waitForHttp(healthUrl, 200, 60_000), failed]);
  };
  return {
    name,
    label,
    port,
    url: `http://127.0.0.1:${port}`,
    env,
    current,
    running,
    output: () => generations.map((app) => app.output()).join(`\n--- ${label} restarted ---\n`),
    stop,
    kill: () => stop('SIGKILL'),
    start,
    async restart(signal: NodeJS.Signals = 'SIGTERM') {
      await stop(signal);
      await start();
    },
  };
}

const PINO_LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Nest's per-module and per-route boot lines. */
const BOOT_NOISE =
  /\[(InstanceLoader|RoutesResolver|RouterExplorer)\]|"context":"(InstanceLoader|RoutesResolver|RouterExplorer)"/;

/**
 * An app's output for a human: pino JSON lines as `LEVEL [context] message (error)`, the per-request
 * lines of pino-http and Nest's boot lines left out (a polling client writes hundreds of the former);
 * other lines as they are.
 */
export function readableLog(output: string): string {
  return output
    .split('\n')
    .flatMap((line) => {
      if (BOOT_NOISE.test(line)) return [];
      if (!line.startsWith('{')) return [line];
      try {
        const entry = JSON.parse(line) as {
          level?: number | string;
          msg?: string;
          message?: string;
          context?: string;
          req?: unknown;
          err?: { message?: string };
        };
        if (entry.req !== undefined && entry.msg === 'request completed') return [];
        // pino (numeric levels, `msg`) or Nest's own JSON logger before pino is attached (`message`).
        const level =
          typeof entry.level === 'number'
            ? (PINO_LEVELS[entry.level] ?? String(entry.level))
            : (entry.level ?? 'info').toUpperCase();
        const context = entry.context ? ` [${entry.context}]` : '';
        const error = entry.err?.message ? ` (${entry.err.message})` : '';
        return [`${level}${context} ${entry.msg ?? entry.message ?? line}${error}`];
      } catch {
        return [line];
      }
    })
    .join('\n');
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** `KEY=VALUE,KEY=VALUE` for LOCAL_SERVER_ENV (values must not contain a comma). */
function envList(env: Readonly<Record<string, string>>): string {
  return Object.entries(env)
    .map(([key, value]) => {
      if (value.includes(',')) throw new Error(`LOCAL_SERVER_ENV value of ${key} contains a comma`);
      return `${key}=${value}`;
    })
    .join(',');
}

/**
 * Starts the control plane from dist/ on a private database and Redis prefix: the APIs first
 * (the game servers and players need them), then the dispatchers, matchers, allocator and
 * maintenance; resolves once every one answers its /health.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const db = await createTestDatabase();
  const ds = await db.dataSource();
  const prefix = testRedisPrefix();
  const keys = createJoinKeys(options.joinKeyIds);
  const shared = { ...db.env, REDIS_KEY_PREFIX: prefix, ...JOURNEY_ENV, ...(options.env ?? {}) };
  const envOf = (name: AppName, extra: Record<string, string>) => ({
    ...shared,
    ...extra,
    ...(options.appEnv?.[name] ?? {}),
  });

  const apis: AppHandle[] = [];
  const dispatchers: AppHandle[] = [];
  const matchers: AppHandle[] = [];
  let allocator: AppHandle | undefined;
  let maintenance: AppHandle | undefined;
  const apps: AppHandle[] = [];

  const plane: ControlPlane = {
    db,
    ds,
    prefix,
    keys,
    apis,
    dispatchers,
    matchers,
    get allocator() {
      return allocator;
    },
    get maintenance() {
      return maintenance;
    },
    apps,
    apiUrl(index) {
      const api = apis[index % apis.length];
      if (!api) throw new Error('the control plane has no API');
      return api.url;
    },
    diagnostics(lines = 40) {
      return apps
        .map(
          (app) =>
            `=== ${app.label} (${app.running() ? 'running' : 'stopped'}) ===\n${tail(readableLog(app.output()), lines)}`,
        )
        .join('\n');
    },
    async diagnose(test) {
      try {
        return await test();
      } catch (error) {
        if (error instanceof Error) {
          error.message += `\n\nControl plane output (last lines per app):\n${plane.diagnostics()}`;
        }
        throw error;
      }
    },
    async close() {
      // The allocator stops its game servers on SIGTERM; the rest stop in parallel.
      await Promise.all(
        apps.filter((app) => app.running()).map((app) => app.stop('SIGTERM', 8_000)),
      );
      for (const pid of await leftoverGameServers(ds).catch(() => [])) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      await db.drop();
      await deleteRedisPrefix(prefix);
      keys.remove();
    },
  };

  const add = async (
    name: AppName,
    index: number,
    portVariable: string,
    extra: Record<string, string> = {},
  ) => {
    const port = await freePort();
    const isApi = name === 'api';
    const env = envOf(name, {
      ...(isApi ? { API_HOST: '127.0.0.1' } : { HEALTH_HOST: '127.0.0.1' }),
      [portVariable]: String(port),
      ...extra,
    });
    const app = handle(name, index, port, env, `http://127.0.0.1:${port}/health`);
    apps.push(app);
    return app;
  };

  try {
    for (let i = 0; i < (options.apis ?? 2); i += 1) apis.push(await add('api', i, 'API_PORT'));
    await Promise.all(apis.map((api) => api.start()));

    for (let i = 0; i < (options.dispatchers ?? 1); i += 1)
      dispatchers.push(await add('dispatcher', i, 'HEALTH_PORT'));
    for (let i = 0; i < (options.matchers ?? 1); i += 1)
      matchers.push(await add('matcher', i, 'HEALTH_PORT'));
    if (options.allocator ?? true) {
      const reportTo = apis[options.gameServerApi ?? 0];
      allocator = await add('allocator', 0, 'HEALTH_PORT', {
        JOIN_KEYS_FILE: keys.file,
        JOIN_ACTIVE_KEY_ID: keys.activeKeyId,
        ALLOCATION_PROVIDER: 'local',
        ALLOCATOR_API_URL: reportTo?.url ?? 'http://127.0.0.1:1',
        LOCAL_SERVER_ENTRY: appEntry('game-server'),
        LOCAL_SERVER_HOST: '127.0.0.1',
        // The game servers' lines land in the allocator's output, for diagnostics.
        LOCAL_SERVER_OUTPUT: 'inherit',
        LOCAL_SERVER_ENV: envList({ ...JOURNEY_GAME_SERVER_ENV, ...(options.gameServerEnv ?? {}) }),
      });
    }
    if (options.maintenance) maintenance = await add('maintenance', 0, 'HEALTH_PORT');
    await Promise.all(apps.filter((app) => app.name !== 'api').map((app) => app.start()));
  } catch (error) {
    const output = plane.diagnostics();
    await plane.close().catch(() => undefined);
    if (error instanceof Error) error.message += `\n${output}`;
    throw error;
  }
  return plane;
}

/**
 * startControlPlane in beforeAll and close in afterAll. The returned object's members are usable
 * inside tests (they throw before beforeAll ran).
 */
export function useControlPlane(
  options: ControlPlaneOptions = {},
  startTimeoutMs = 90_000,
): ControlPlane {
  let plane: ControlPlane | undefined;
  beforeAll(async () => {
    plane = await startControlPlane(options);
  }, startTimeoutMs);
  afterAll(async () => {
    await plane?.close();
  }, 60_000);
  const started = (): ControlPlane => {
    if (!plane) throw new Error('the control plane is not started (use it inside a test)');
    return plane;
  };
  return new Proxy({} as ControlPlane, {
    get: (_target, property) => {
      // Not a thenable, and printable (jest formats objects by symbols) before the start.
      if (typeof property === 'symbol' || property === 'then') return undefined;
      const value = Reflect.get(started(), property) as unknown;
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(plane)
        : value;
    },
  });
}

// ---- Notifications -----------------------------------------------------------------------------

/** A match's states in lifecycle order (DESIGN.md "Aggregates and states"); every end is last. */
export const MATCH_LIFECYCLE_ORDER: Readonly<Record<string, number>> = {
  AWAITING_ACCEPTANCE: -1,
  ALLOCATING: 0,
  PROCESS_READY: 1,
  ASSIGNMENT_READY: 2,
  IN_PROGRESS: 3,
  COMPLETED: 4,
  FAILED: 4,
  CANCELLED: 4,
};
export const TERMINAL_MATCH_STATES: ReadonlySet<string> = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
]);
export const HAPPY_PATH_STATES = [
  'ALLOCATING',
  'PROCESS_READY',
  'ASSIGNMENT_READY',
  'IN_PROGRESS',
  'COMPLETED',
] as const;

/**
 * Everything one client's NotificationSubscriber handed to its handlers, in arrival order. Pass
 * `log.handlers` to `PlayerClient.subscribe` (JourneyPlayer does).
 */
export class NotificationLog {
  readonly events: MatchEventMessage[] = [];
  readonly resyncs: ResyncMessage[] = [];
  readonly connections: NotificationConnectionEvent[] = [];
  readonly errors: (Error | ErrorMessage)[] = [];
  readonly handlers: NotificationHandlers = {
    onEvent: (event) => this.events.push(event),
    onResync: (resync) => this.resyncs.push(resync),
    onConnection: (event) => this.connections.push(event),
    onError: (error) => this.errors.push(error),
  };

  constructor(readonly label = 'client') {}

  forMatch(matchId: string): MatchEventMessage[] {
    return this.events.filter((event) => event.matchId === matchId);
  }

  revisions(matchId: string): number[] {
    return this.forMatch(matchId).map((event) => event.revision);
  }

  states(matchId: string): string[] {
    return this.forMatch(matchId).map((event) => event.state);
  }

  /** Ids of every match this client heard of, in order of first event. */
  matchIds(): string[] {
    return [...new Set(this.events.map((event) => event.matchId))];
  }

  /** Resolves once `matchId` has reached `state` (a state name, or `'terminal'`: any end state). */
  async waitForState(
    matchId: string,
    state: string,
    timeoutMs = 60_000,
  ): Promise<MatchEventMessage> {
    const reached = (event: MatchEventMessage) =>
      event.matchId === matchId &&
      (state === 'terminal' ? TERMINAL_MATCH_STATES.has(event.state) : event.state === state);
    return waitFor(() => Promise.resolve(this.events.find(reached)), {
      timeoutMs,
      intervalMs: 25,
      what: `${this.label} to be notified of ${matchId} reaching ${state} (has ${JSON.stringify(this.states(matchId))})`,
    });
  }

  /**
   * The client saw `matchId` in order: revisions 1, 2, 3, ... (strictly increasing, no gap, no
   * duplicate, from revision 1), states in lifecycle order ending at most once, no resync of the
   * match, and, when given, exactly `expectedStates`.
   */
  assertOrdered(matchId: string, expectedStates?: readonly string[]): void {
    const events = this.forMatch(matchId);
    const describe = () =>
      `${this.label} got ${JSON.stringify(events.map((e) => [e.revision, e.state]))} for match ${matchId}`;
    if (events.length === 0)
      throw new Error(`${this.label} got no notification of match ${matchId}`);
    events.forEach((event, index) => {
      if (event.revision !== index + 1) {
        throw new Error(
          `revision ${event.revision} at position ${index} (expected ${index + 1}): ${describe()}`,
        );
      }
      if (event.event !== 'match.state_changed')
        throw new Error(`unexpected event ${event.event}: ${describe()}`);
      const rank = MATCH_LIFECYCLE_ORDER[event.state];
      if (rank === undefined) throw new Error(`unknown state ${event.state}: ${describe()}`);
      const previous = events[index - 1];
      if (previous) {
        const previousRank = MATCH_LIFECYCLE_ORDER[previous.state]!;
        if (TERMINAL_MATCH_STATES.has(previous.state) || rank <= previousRank) {
          throw new Error(
            `${event.state} after ${previous.state} is out of lifecycle order: ${describe()}`,
          );
        }
        if (Date.parse(event.occurredAt) < Date.parse(previous.occurredAt)) {
          throw new Error(
            `r${event.revision} occurred before r${previous.revision}: ${describe()}`,
          );
        }
      }
    });
    // A ready-check mode's matches start AWAITING_ACCEPTANCE; every other, ALLOCATING.
    if (events[0]!.state !== 'ALLOCATING' && events[0]!.state !== 'AWAITING_ACCEPTANCE')
      throw new Error(`the first state is not ALLOCATING or AWAITING_ACCEPTANCE: ${describe()}`);
    const resynced = this.resyncs.filter((resync) => resync.matchId === matchId);
    if (resynced.length > 0)
      throw new Error(`${this.label} was resynced on ${matchId}: ${JSON.stringify(resynced)}`);
    if (expectedStates) expect(events.map((event) => event.state)).toEqual([...expectedStates]);
  }
}

// ---- Players -----------------------------------------------------------------------------------

export interface JourneyPlayerOptions {
  /** Regions to probe. Default ['eu-west']. */
  regions?: readonly string[];
  /** Probe samples per region. Default 1. */
  samples?: number;
  /** Poll interval of the ticket and assignment waits. Default 100. */
  pollMs?: number;
}

/**
 * One player going through the control plane with the SDK: a PlayerClient on one API replica, its
 * notification subscription feeding `log`, its ticket (heartbeated while queued), assignment and
 * game connection. Each step is a method, so a suite can stop anywhere (a no-show never joins, a
 * canceller cancels); `playJourneyPlayer` runs the whole way.
 */
export class JourneyPlayer {
  readonly client: PlayerClient;
  readonly log: NotificationLog;
  session: SessionResponse | undefined;
  subscription: NotificationSubscription | undefined;
  ticket: TicketResponse | undefined;
  heartbeats: HeartbeatHandle | undefined;
  readonly heartbeatErrors: unknown[] = [];
  assignment: AssignmentResponse | undefined;
  game: GameConnection | undefined;
  private readonly pollMs: number;

  constructor(
    readonly baseUrl: ApiEndpointsInput,
    readonly name: string,
    private readonly options: JourneyPlayerOptions = {},
  ) {
    this.client = new PlayerClient({ baseUrl, retries: { retries: 3, baseDelayMs: 100 } });
    this.log = new NotificationLog(name);
    this.pollMs = options.pollMs ?? 100;
  }

  get playerId(): string {
    if (!this.session) throw new Error(`${this.name} has not signed in`);
    return this.session.playerId;
  }

  get ticketId(): string {
    if (!this.ticket) throw new Error(`${this.name} has not queued`);
    return this.ticket.id;
  }

  /** A new guest session, then the probes (so the player can queue). */
  async signIn(): Promise<this> {
    this.session = await this.client.createSession();
    const { measured, failed } = await this.client.probeAll(this.options.regions ?? ['eu-west'], {
      samples: this.options.samples ?? 1,
    });
    if (Object.keys(measured).length === 0) {
      throw new Error(
        `${this.name} measured no region: ${Object.values(failed).map(String).join('; ')}`,
      );
    }
    return this;
  }

  /** Subscribes to notifications (on this player's replica) and waits until the socket is ready. */
  async subscribe(): Promise<this> {
    this.subscription = this.client.subscribe(this.log.handlers, {
      reconnect: { baseDelayMs: 100, maxDelayMs: 1_000 },
    });
    await this.subscription.ready;
    return this;
  }

  /** Queues for `mode` and starts heartbeating the ticket. */
  async enqueue(mode = 'duel'): Promise<TicketResponse> {
    this.heartbeats?.stop();
    this.assignment = undefined;
    this.game = undefined;
    this.ticket = await this.client.enqueue(mode);
    this.heartbeats = this.client.startHeartbeats(this.ticket.id, {
      onError: (error) => this.heartbeatErrors.push(error),
    });
    return this.ticket;
  }

  /**
   * A party member once the leader queued the party: finds this member's own ticket of the party
   * ticket and starts heartbeating it (every member heartbeats its own).
   */
  async followPartyTicket(timeoutMs = 30_000): Promise<TicketResponse> {
    this.heartbeats?.stop();
    this.assignment = undefined;
    this.game = undefined;
    const ticketId = await this.client.waitForPartyTicket({ timeoutMs, pollMs: this.pollMs });
    this.ticket = await this.client.ticket(ticketId);
    this.heartbeats = this.client.startHeartbeats(ticketId, {
      onError: (error) => this.heartbeatErrors.push(error),
    });
    return this.ticket;
  }

  /** Cancels the current ticket; the heartbeats stop. */
  async cancel(): Promise<TicketResponse> {
    const ticket = await this.client.cancel(this.ticketId);
    this.heartbeats?.stop();
    this.ticket = ticket;
    return ticket;
  }

  /** The ticket as the API shows it now (kept as `ticket`). */
  async refreshTicket(): Promise<TicketResponse> {
    this.ticket = await this.client.ticket(this.ticketId);
    return this.ticket;
  }

  async waitForTicket(
    predicate: (ticket: TicketResponse) => boolean,
    timeoutMs = 60_000,
  ): Promise<TicketResponse> {
    this.ticket = await this.client.waitForTicket(this.ticketId, predicate, {
      timeoutMs,
      pollMs: this.pollMs,
    });
    return this.ticket;
  }

  /** Waits for the ticket to leave SEARCHING matched; returns its match id. */
  async waitForMatch(timeoutMs = 60_000): Promise<string> {
    const ticket = await this.waitForTicket((t) => t.state !== 'SEARCHING', timeoutMs);
    if (
      ticket.matchId === undefined ||
      !['MATCHED', 'ASSIGNED', 'CONNECTED', 'COMPLETED'].includes(ticket.state)
    ) {
      throw new Error(`${this.name}'s ticket left SEARCHING unmatched: ${JSON.stringify(ticket)}`);
    }
    return ticket.matchId;
  }

  /** The assignment of the ticket's match (polling while not ready). */
  async waitForAssignment(timeoutMs = 60_000): Promise<AssignmentResponse> {
    const matchId = this.ticket?.matchId;
    if (!matchId) throw new Error(`${this.name}'s ticket has no match`);
    this.assignment = await this.client.waitForAssignment(matchId, {
      timeoutMs,
      pollMs: this.pollMs,
    });
    return this.assignment;
  }

  /** Joins the assigned game server. */
  async join(): Promise<GameConnection> {
    if (!this.assignment) throw new Error(`${this.name} has no assignment`);
    this.game = await this.client.joinMatch(this.assignment);
    return this.game;
  }

  /** Stops heartbeats, leaves the game, ends the subscription. Idempotent. */
  close(): void {
    this.heartbeats?.stop();
    this.game?.close();
    this.subscription?.close();
  }
}

/** A signed-in, subscribed player on `baseUrl` (or the first of a list of replicas, failing over). */
export async function readyPlayer(
  baseUrl: ApiEndpointsInput,
  name: string,
  options: JourneyPlayerOptions = {},
): Promise<JourneyPlayer> {
  const player = new JourneyPlayer(baseUrl, name, options);
  await player.signIn();
  await player.subscribe();
  return player;
}

export interface JourneyResult {
  matchId: string;
  assignment: AssignmentResponse;
  game: GameConnection;
  ended: GameEnded;
  /** The ticket once it left the match (COMPLETED on the happy path). */
  ticket: TicketResponse;
}

export interface PlayJourneyOptions {
  mode?: string;
  /** Skip enqueueing: the player already holds a searching ticket. */
  queued?: boolean;
  /** Per wait (match, assignment, end). Default 60_000. */
  timeoutMs?: number;
}

/**
 * One player's whole way through a match: queue (unless `queued`), matched, assignment, joined,
 * the game's `ended`, then the ticket's end (waited for until it leaves CONNECTED).
 */
export async function playJourneyPlayer(
  player: JourneyPlayer,
  options: PlayJourneyOptions = {},
): Promise<JourneyResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!options.queued) await player.enqueue(options.mode ?? 'duel');
  const matchId = await player.waitForMatch(timeoutMs);
  const assignment = await player.waitForAssignment(timeoutMs);
  const game = await player.join();
  const ended = await withTimeout(game.ended, timeoutMs, `${player.name}'s game to end`);
  const ticket = await player.waitForTicket(
    (t) => !['SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED'].includes(t.state),
    timeoutMs,
  );
  return { matchId, assignment, game, ended, ticket };
}

// ---- Assertions on the database ----------------------------------------------------------------

export interface MatchRow {
  state: string;
  revision: number;
  failure_reason: string | null;
  mode: string;
  region: string;
}

export async function matchRow(ds: DataSource, matchId: string): Promise<MatchRow> {
  const [row] = await ds.query<(Omit<MatchRow, 'revision'> & { revision: string })[]>(
    `SELECT state, revision, failure_reason, mode, region FROM matches WHERE id = $1`,
    [matchId],
  );
  if (!row) throw new Error(`no match ${matchId}`);
  return { ...row, revision: Number(row.revision) };
}

/** Ticket ids on the roster of `matchId`, sorted. */
export async function matchTicketIds(ds: DataSource, matchId: string): Promise<string[]> {
  const rows = await ds.query<{ ticket_id: string }[]>(
    `SELECT ticket_id FROM match_participants WHERE match_id = $1 ORDER BY ticket_id`,
    [matchId],
  );
  return rows.map((row) => row.ticket_id);
}

/** Every match whose roster lists `ticketId` (a requeued ticket may be in several). */
export async function matchesOfTicket(ds: DataSource, ticketId: string): Promise<string[]> {
  const rows = await ds.query<{ match_id: string }[]>(
    `SELECT match_id FROM match_participants WHERE ticket_id = $1`,
    [ticketId],
  );
  return rows.map((row) => row.match_id);
}

/** The payload of a ticket's latest `ticket.state_changed` (its `reason` says why it ended). */
export async function lastTicketChange(
  ds: DataSource,
  ticketId: string,
): Promise<{ from: string | null; to: string; reason?: string; matchId?: string }> {
  const [row] = await ds.query<
    { payload: { from: string | null; to: string; reason?: string; matchId?: string } }[]
  >(
    `SELECT payload FROM outbox WHERE aggregate_id = $1 AND event = 'ticket.state_changed' ORDER BY revision DESC LIMIT 1`,
    [ticketId],
  );
  if (!row) throw new Error(`no ticket event of ${ticketId}`);
  return row.payload;
}

export async function allocationRow(
  ds: DataSource,
  matchId: string,
): Promise<{ state: string; server_id: string; endpoint: string | null; pid: number | null }> {
  const [row] = await ds.query<
    { state: string; server_id: string; endpoint: string | null; pid: number | null }[]
  >(
    `SELECT state, server_id, endpoint, (provider_ref->>'pid')::int AS pid FROM allocations WHERE match_id = $1`,
    [matchId],
  );
  if (!row) throw new Error(`no allocation of match ${matchId}`);
  return row;
}

/** Whether a process is alive. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** The MatchplaneApiError a call fails with. */
export async function apiErrorOf(promise: Promise<unknown>): Promise<MatchplaneApiError> {
  const error = await rejectionOf(promise);
  if (!(error instanceof MatchplaneApiError)) throw error;
  return error;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
