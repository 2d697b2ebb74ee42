/*
 * bench:api — one API process (and the maintenance app, which checkpoints the tickets' liveness)
 * under N simulated players (default 100,000). First the HTTP ceiling: a bare NestJS route on the
 * same adapter. The players are queued through the production stores in bulk (a sample of them,
 * --http-setup-players, through the real routes, timed), then heartbeat paced open-loop at
 * --pace-percent (25) of that ceiling, so latency is not hidden by a slow client; each player
 * beats no more often than every 10 s (players >= 10 x the rate: more players when the ceiling
 * asks for it). Then the saturation heartbeat rate (closed loop), reported against the same
 * ceiling, and pgbench running the PostgreSQL path's heartbeat transaction (idempotency row insert
 * + ticket update) for reference, all in the same run. Progress on stderr; one JSON line last on
 * stdout.
 */
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { ApiConfig } from '../../apps/api/src/api.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { dataSourceOptions, Migrator } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { envPairs, parseFlags, usage, UsageError, writeResults, type FlagSpec } from './bench.cli';
import { queuePlayersInBulk } from './api-bench.setup';
import {
  cpuTicks,
  deleteRedisPrefix,
  freePort,
  REPO_ROOT,
  installCleanup,
  round1,
  sleep,
  startChild,
  startNodeChild,
  waitUntil,
  type BenchChild,
} from './bench.processes';

const LOCALHOST = '127.0.0.1';
// Per run, so two benches (or a bench and a profile) on one machine never drop each other's database.
const DATABASE = `mp_bench_api_${process.pid}`;
const PREFIX = DATABASE;
const PGBENCH = existsSync('/usr/bin/pgbench') ? '/usr/bin/pgbench' : 'pgbench';
const REGIONS = ['eu-west', 'us-east'];
/** Answers slower than this are counted per second of the paced phase (issue 12's old target). */
const SLOW_HEARTBEAT_MS = 25;
/** Issue 33's targets: paced p99, saturation as a share of the bare route's rate. */
const PACED_P99_TARGET_MS = 50;
const SATURATION_TARGET_OF_BARE = 0.4;
/** Each simulated player heartbeats at most this often (the SDK's default interval). */
const MIN_PLAYER_INTERVAL_MS = 10_000;

const FLAGS: FlagSpec[] = [
  {
    name: 'players',
    description: 'simulated players, at least (raised to 10 x the paced rate when that is more)',
    int: { min: 10, max: 1_000_000, default: 100_000 },
  },
  {
    name: 'pace-percent',
    description: 'paced heartbeat rate, in percent of the bare NestJS route measured first',
    int: { min: 1, max: 100, default: 25 },
  },
  {
    name: 'heartbeat-interval-ms',
    description:
      'each player heartbeats this often, the rate players/interval instead of --pace-percent (0: paced by the ceiling)',
    int: { min: 0, max: 600_000, default: 0 },
  },
  {
    name: 'http-setup-players',
    description:
      'players queued through the real routes (timed); the rest through the stores in bulk',
    int: { min: 0, max: 100_000, default: 1_000 },
  },
  {
    name: 'seconds',
    description: 'length of the paced heartbeat phase and of each ceiling',
    int: { min: 2, max: 600, default: 20 },
  },
  {
    name: 'setup-concurrency',
    description: 'requests in flight while players sign in, probe and queue',
    int: { min: 1, max: 512, default: 32 },
  },
  {
    name: 'concurrency',
    description: 'requests in flight in the saturation and ceiling phases',
    int: { min: 1, max: 512, default: 32 },
  },
  {
    name: 'pool',
    description: "the API's DATABASE_POOL_SIZE",
    int: { min: 1, max: 200, default: 20 },
  },
  {
    name: 'results',
    description: 'file the figures are written to',
    string: { default: 'test/bench/results/api.json' },
  },
  {
    name: 'profile',
    description: 'run the API with --cpu-prof (profile in dist/bench-profiles/)',
    switch: true,
  },
  {
    name: 'api-env',
    description: 'extra API environment, K=V[,K=V...]',
    string: { default: '' },
  },
  {
    name: 'warmup-seconds',
    description: 'heartbeats at the paced rate before the paced phase, reported apart (0: none)',
    int: { min: 0, max: 60, default: 3 },
  },
  {
    name: 'trace',
    description: "file to write each paced heartbeat's start (epoch ms) and latency to, as CSV",
    string: { default: '' },
  },
  {
    name: 'skip-paced',
    description: 'skip the paced phase (profiling the saturation alone)',
    switch: true,
  },
];

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

interface Reply {
  status: number;
  body: string;
}

function request(
  port: number,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: LOCALHOST,
        port,
        method,
        path: url,
        agent,
        headers: {
          ...headers,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Latencies in ms; percentiles by nearest rank. */
class Latencies {
  private readonly values: number[] = [];
  errors = 0;
  add(ms: number): void {
    this.values.push(ms);
  }
  get count(): number {
    return this.values.length;
  }
  summary(): { count: number; errors: number; p50_ms: number; p99_ms: number; max_ms: number } {
    const sorted = [...this.values].sort((a, b) => a - b);
    const at = (q: number) =>
      round1(
        sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0,
      );
    return {
      count: sorted.length,
      errors: this.errors,
      p50_ms: at(0.5),
      p99_ms: at(0.99),
      max_ms: at(1),
    };
  }
}

async function timed(
  latencies: Latencies,
  expected: number,
  call: () => Promise<Reply>,
  onLatency?: (ms: number) => void,
): Promise<Reply> {
  const started = performance.now();
  const reply = await call();
  const ms = performance.now() - started;
  latencies.add(ms);
  onLatency?.(ms);
  if (reply.status !== expected) {
    latencies.errors += 1;
    if (latencies.errors <= 3) progress(`unexpected ${reply.status}: ${reply.body.slice(0, 200)}`);
  }
  return reply;
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight. */
async function pooled(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Calls `work` for `seconds` with `concurrency` loops; returns completed calls per second. */
async function closedLoop(
  seconds: number,
  concurrency: number,
  work: () => Promise<unknown>,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await work();
        done += 1;
      }
    }),
  );
  return Math.round(done / ((performance.now() - started) / 1000));
}

/** Context switches of the process so far (all threads): voluntary (it waited) and not (preempted). */
function contextSwitches(pid: number): { voluntary: number; involuntary: number } {
  let voluntary = 0;
  let involuntary = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
    voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return { voluntary, involuntary };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return round1(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

function cpuPercentOf(pid: number, work: () => Promise<unknown>): Promise<{ cpu_percent: number }> {
  const before = cpuTicks(pid) ?? 0;
  const started = performance.now();
  return work().then(() => ({
    cpu_percent: round1(((cpuTicks(pid) ?? 0) - before) / ((performance.now() - started) / 1000)),
  }));
}

/** The API's event-loop delay since the previous scrape (prom-client resets its histogram on collect). */
async function eventLoopDelay(
  port: number,
): Promise<{ p50_ms: number; p99_ms: number; max_ms: number }> {
  const text = (await request(port, 'GET', '/metrics', {})).body;
  const seconds = (name: string) =>
    Number(
      new RegExp(`^nodejs_eventloop_lag_${name}_seconds\\{[^}]*\\} ([0-9.e+-]+)$`, 'm').exec(
        text,
      )?.[1] ?? NaN,
    );
  return {
    p50_ms: round1(seconds('p50') * 1000),
    p99_ms: round1(seconds('p99') * 1000),
    max_ms: round1(seconds('max') * 1000),
  };
}

/**
 * The API's heartbeat batches so far: PostgreSQL transactions (api_heartbeat_batch_size) or, with
 * `liveness`, Redis pipelines of the liveness store (api_heartbeat_liveness_batch_size); absent in
 * older builds.
 */
async function heartbeatBatches(
  port: number,
  liveness = false,
): Promise<{ sum: number; count: number }> {
  const text = (await request(port, 'GET', '/metrics', {})).body;
  const metric = liveness ? 'api_heartbeat_liveness_batch_size' : 'api_heartbeat_batch_size';
  const read = (suffix: string) =>
    Number(
      new RegExp(`^${metric}_${suffix}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN,
    );
  return { sum: read('sum'), count: read('count') };
}

function meanBatchSize(
  before: { sum: number; count: number },
  after: { sum: number; count: number },
): number | null {
  const batches = after.count - before.count;
  return Number.isFinite(batches) && batches > 0
    ? round1((after.sum - before.sum) / batches)
    : null;
}

interface BackendSamples {
  samples: number;
  /** Per sample, how many of the API's backends were busy (mean). */
  busy_mean: number;
  /** Share of busy backend samples per `wait_event_type:wait_event` ("CPU" when not waiting). */
  waits_pct: Record<string, number>;
  /** Share of busy backend samples per statement (first 60 characters). */
  statements_pct: Record<string, number>;
}

/**
 * Samples pg_stat_activity every `intervalMs` for the API's backends in `database` until `stop`
 * resolves: where the database side of a request spends its time.
 */
async function sampleBackends(
  client: Client,
  database: string,
  intervalMs: number,
  stop: Promise<unknown>,
): Promise<BackendSamples> {
  let running = true;
  void stop.finally(() => (running = false));
  let samples = 0;
  let busy = 0;
  const waits = new Map<string, number>();
  const statements = new Map<string, number>();
  while (running) {
    const rows = (
      await client.query<{ wait: string | null; query: string }>(
        `SELECT wait_event_type || ':' || wait_event AS wait, query FROM pg_stat_activity
          WHERE datname = $1 AND application_name = 'api' AND state = 'active'`,
        [database],
      )
    ).rows;
    samples += 1;
    busy += rows.length;
    for (const row of rows) {
      const wait = row.wait ?? 'CPU';
      waits.set(wait, (waits.get(wait) ?? 0) + 1);
      const statement = row.query.replace(/\s+/g, ' ').trim().slice(0, 60);
      statements.set(statement, (statements.get(statement) ?? 0) + 1);
    }
    await sleep(intervalMs);
  }
  const shares = (counts: Map<string, number>) =>
    Object.fromEntries(
      [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([key, count]) => [key, round1((100 * count) / Math.max(1, busy))]),
    );
  return {
    samples,
    busy_mean: round1(busy / Math.max(1, samples)),
    waits_pct: shares(waits),
    statements_pct: shares(statements),
  };
}

/** Tickets the maintenance app's liveness checkpoints wrote so far (its metrics). */
async function checkpointedTickets(port: number): Promise<number | null> {
  const text = (await request(port, 'GET', '/metrics', {})).body;
  const value = /^ticket_liveness_checkpointed_total(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

function progress(line: string): void {
  process.stderr.write(`[bench:api] ${line}\n`);
}

interface Player {
  token: string;
  ticketId: string;
}

async function main(): Promise<void> {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2), FLAGS);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(
        `${error.message}\n${usage('npm run bench:api --', 'API throughput and latency under simulated players', FLAGS)}`,
      );
      process.exit(2);
    }
    throw error;
  }
  const seconds = flags.seconds as number;
  const service = { ...loadConfig(ServiceConfig), DATABASE_HOST: LOCALHOST, REDIS_HOST: LOCALHOST };
  const adminDatabase = loadConfig(MigrateConfig).DATABASE_ADMIN_NAME;
  const admin = async (sql: string) => {
    const client = new Client({
      host: LOCALHOST,
      port: service.DATABASE_PORT,
      user: service.DATABASE_USER,
      password: service.DATABASE_PASSWORD,
      database: adminDatabase,
    });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const children: BenchChild[] = [];
  installCleanup(async () => {
    for (const child of children) await child.stop(5_000);
  });

  // ---- HTTP ceiling first: a bare NestJS route on the same adapter; the paced rate follows it ---
  progress(`ceiling: bare NestJS route, ${flags.concurrency} in flight for ${seconds} s`);
  const barePort = await freePort();
  const bare = startNodeChild(
    'bare-nest',
    'dist/test/bench/bare-nest.main.js',
    [String(barePort)],
    { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  );
  children.push(bare);
  await waitUntil(() => bare.output().includes('bare-nest ready'), 'the bare NestJS app');
  const bareLatency = new Latencies();
  let bareRate = 0;
  const bareCpu = await cpuPercentOf(bare.pid, async () => {
    bareRate = await closedLoop(seconds, flags.concurrency as number, () =>
      timed(bareLatency, 200, () => request(barePort, 'GET', '/bare', {})),
    );
  });
  await bare.stop();

  const explicitIntervalMs = flags['heartbeat-interval-ms'] as number;
  const pacedByCeiling = explicitIntervalMs === 0;
  const rate = pacedByCeiling
    ? ((flags['pace-percent'] as number) / 100) * bareRate
    : ((flags.players as number) * 1000) / explicitIntervalMs;
  const players = pacedByCeiling
    ? Math.max(flags.players as number, Math.ceil((rate * MIN_PLAYER_INTERVAL_MS) / 1000))
    : (flags.players as number);
  const intervalMs = pacedByCeiling ? Math.round((players * 1000) / rate) : explicitIntervalMs;
  progress(
    `ceiling ${bareRate}/s: ${players} players heartbeating every ${intervalMs} ms (${round1(rate)}/s)`,
  );

  progress(`setup: database ${DATABASE}`);
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${DATABASE}`);
  const dataSource = new DataSource(
    dataSourceOptions({ ...service, DATABASE_NAME: DATABASE }, { migrations: allMigrations }),
  );
  await dataSource.initialize();
  await new Migrator(dataSource).up();

  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATABASE_HOST: LOCALHOST,
    DATABASE_PORT: String(service.DATABASE_PORT),
    DATABASE_USER: service.DATABASE_USER,
    DATABASE_NAME: DATABASE,
    DATABASE_POOL_SIZE: String(flags.pool),
    REDIS_HOST: LOCALHOST,
    REDIS_PORT: String(service.REDIS_PORT),
    REDIS_KEY_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    PROBE_REGIONS: REGIONS.join(','),
    TICKET_HEARTBEAT_INTERVAL_MS: String(Math.min(600_000, Math.max(1_000, intervalMs))),
    // Generous: the bench must not lose tickets to expiry while setup runs.
    TICKET_HEARTBEAT_TIMEOUT_MS: '3600000',
    ...(service.DATABASE_PASSWORD ? { DATABASE_PASSWORD: service.DATABASE_PASSWORD } : {}),
    ...(service.REDIS_PASSWORD ? { REDIS_PASSWORD: service.REDIS_PASSWORD } : {}),
  };
  const port = await freePort();
  const profileDir = path.join(REPO_ROOT, 'dist/bench-profiles');
  if (flags.profile === true) mkdirSync(profileDir, { recursive: true });
  const api = startNodeChild(
    'api',
    'dist/apps/api/src/main.js',
    [],
    {
      ...env,
      API_HOST: LOCALHOST,
      API_PORT: String(port),
      // Every simulated player signs in from 127.0.0.1, which no per-address limit would allow;
      // the per-session limits stay at their defaults, so their cost is part of the figures.
      API_RATE_LIMIT_SESSIONS_PER_ADDRESS: '0',
      API_RATE_LIMIT_REQUESTS_PER_ADDRESS: '0',
      ...envPairs('api-env', flags['api-env'] as string),
    },
    flags.profile === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  children.push(api);
  await waitUntil(async () => {
    if (!api.alive()) throw new Error(`api exited:\n${api.output()}`);
    return (await request(port, 'GET', '/health', {})).status === 200;
  }, 'the API to be healthy');
  const idleRss = rssMb(api.pid);
  // The liveness checkpoint's writer, as deployed: every TICKET_LIVENESS_CHECKPOINT_INTERVAL_MS
  // (its default) the beats answered from Redis go to PostgreSQL in bulk, during every phase.
  const maintenancePort = await freePort();
  const maintenance = startNodeChild('maintenance', 'dist/apps/maintenance/src/main.js', [], {
    ...env,
    HEALTH_HOST: LOCALHOST,
    HEALTH_PORT: String(maintenancePort),
  });
  children.push(maintenance);
  await waitUntil(async () => {
    if (!maintenance.alive()) throw new Error(`maintenance exited:\n${maintenance.output()}`);
    return (
      (await request(maintenancePort, 'GET', '/live', {}).catch(() => ({ status: 0 }))).status ===
      200
    );
  }, 'the maintenance app to be live');

  // ---- players sign in, probe and queue -------------------------------------------------------
  const sessionLatency = new Latencies();
  const answerLatency = new Latencies();
  const createLatency = new Latencies();
  const roster: Player[] = [];
  const setupStarted = performance.now();
  const httpPlayers = Math.min(players, flags['http-setup-players'] as number);
  await pooled(httpPlayers, flags['setup-concurrency'] as number, async (index) => {
    const session = await timed(sessionLatency, 201, () =>
      request(port, 'POST', '/v1/sessions', {}, {}),
    );
    const { token } = JSON.parse(session.body) as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    for (const region of REGIONS) {
      const challenge = JSON.parse(
        (await request(port, 'POST', `/v1/probes/${region}/challenge`, auth)).body,
      ) as { challengeId: string; nonce: string };
      await timed(answerLatency, 200, () =>
        request(port, 'POST', `/v1/probes/${region}/answer`, auth, {
          challengeId: challenge.challengeId,
          nonce: challenge.nonce,
        }),
      );
    }
    const created = await timed(createLatency, 201, () =>
      request(
        port,
        'POST',
        '/v1/queue/tickets',
        { ...auth, 'idempotency-key': randomUUID() },
        { mode: index % 2 === 0 ? 'duel' : 'squad' },
      ),
    );
    roster.push({ token, ticketId: (JSON.parse(created.body) as { id: string }).id });
  });
  const httpSetupSeconds = (performance.now() - setupStarted) / 1000;
  progress(`setup: ${httpPlayers} players through the routes in ${round1(httpSetupSeconds)} s`);
  const setupRedis = new Redis({
    host: LOCALHOST,
    port: service.REDIS_PORT,
    password: service.REDIS_PASSWORD,
    maxRetriesPerRequest: null,
  });
  const bulkStarted = performance.now();
  let reported = 0;
  const bulk = await queuePlayersInBulk(
    dataSource,
    setupRedis,
    { ...service, REDIS_KEY_PREFIX: PREFIX },
    players - httpPlayers,
    (index) => (index % 2 === 0 ? 'duel' : 'squad'),
    (index) => ({ 'eu-west': 20 + (index % 40), 'us-east': 90 + (index % 40) }),
    (queued) => {
      if (queued - reported >= 10_000) {
        reported = queued;
        progress(`setup: ${httpPlayers + queued}/${players} players queued`);
      }
    },
  );
  roster.push(...bulk);
  setupRedis.disconnect();
  const bulkSetupSeconds = (performance.now() - bulkStarted) / 1000;
  const setupSeconds = (performance.now() - setupStarted) / 1000;
  progress(`setup: ${players} players in ${round1(setupSeconds)} s`);

  const heartbeat = (player: Player) =>
    request(port, 'POST', `/v1/queue/tickets/${player.ticketId}/heartbeat`, {
      authorization: `Bearer ${player.token}`,
      'idempotency-key': randomUUID(),
    });

  // ---- paced heartbeats: every player every interval ------------------------------------------
  const tracePath = flags.trace as string;
  const trace: string[] | undefined = tracePath ? ['started_epoch_ms,latency_ms'] : undefined;
  /**
   * Heartbeats at `rate` for `length` seconds, open loop, players in roster order from the
   * `first`-th heartbeat on; counts answers slower than SLOW_HEARTBEAT_MS per second. Returns
   * the index of the next heartbeat, so a following phase keeps every player's cadence.
   */
  const pacedHeartbeats = async (
    first: number,
    length: number,
    latencies: Latencies,
    slowPerSecond: number[],
  ): Promise<number> => {
    const started = performance.now();
    const total = Math.round(rate * length);
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < total; i += 1) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const player = roster[(first + i) % roster.length] as Player;
      const second = Math.min(length - 1, Math.floor(i / rate));
      inFlight.push(
        timed(
          latencies,
          200,
          () => heartbeat(player),
          (ms) => {
            if (ms > SLOW_HEARTBEAT_MS) slowPerSecond[second] = (slowPerSecond[second] ?? 0) + 1;
            trace?.push(`${round1(Date.now() - ms)},${round1(ms)}`);
          },
        ),
      );
    }
    await Promise.all(inFlight);
    return first + total;
  };
  const skipPaced = flags['skip-paced'] === true;
  const warmupSeconds = skipPaced ? 0 : (flags['warmup-seconds'] as number);
  const warmup = new Latencies();
  const warmupSlowPerSecond = Array.from({ length: warmupSeconds }, () => 0);
  let nextHeartbeat = 0;
  if (warmupSeconds > 0) {
    // The first heartbeats after setup meet a cold heartbeat path (V8, each connection's prepared
    // statements) and what setup left behind; they are reported apart, as the warm-up.
    progress(`warm-up: heartbeats at ${round1(rate)}/s for ${warmupSeconds} s`);
    nextHeartbeat = await pacedHeartbeats(0, warmupSeconds, warmup, warmupSlowPerSecond);
  }
  progress(`heartbeats: ${round1(rate)}/s for ${seconds} s (open loop)`);
  const paced = new Latencies();
  const pacedBatchesBefore = await heartbeatBatches(port);
  const pacedBeatBatchesBefore = await heartbeatBatches(port, true);
  // Where a tail comes from: slow answers per second of the phase (a stall bunches them), and
  // the event-loop delay of the API and of this process (a lagging client inflates every figure).
  const slowPerSecond = Array.from({ length: seconds }, () => 0);
  await eventLoopDelay(port); // resets the API's histogram
  // Sampled every 10 ms like the API's (prom-client's default): both figures include those 10 ms.
  const benchLoop = monitorEventLoopDelay({ resolution: 10 });
  benchLoop.enable();
  const pacedPhase = cpuPercentOf(api.pid, () =>
    skipPaced ? Promise.resolve(0) : pacedHeartbeats(nextHeartbeat, seconds, paced, slowPerSecond),
  );
  const pacedCpu = await pacedPhase;
  if (trace) writeFileSync(tracePath, `${trace.join('\n')}\n`);
  benchLoop.disable();
  const pacedLoop = await eventLoopDelay(port);
  const pacedBatchSize = meanBatchSize(pacedBatchesBefore, await heartbeatBatches(port));
  const pacedBeatBatchSize = meanBatchSize(
    pacedBeatBatchesBefore,
    await heartbeatBatches(port, true),
  );
  const pacedRss = rssMb(api.pid);

  // ---- saturation ------------------------------------------------------------------------------
  progress(`saturation: ${flags.concurrency} heartbeats in flight for ${seconds} s`);
  const saturated = new Latencies();
  let cursor = 0;
  let saturationRate = 0;
  await eventLoopDelay(port); // resets the API's histogram
  const sampler = new Client({
    host: LOCALHOST,
    port: service.DATABASE_PORT,
    user: service.DATABASE_USER,
    password: service.DATABASE_PASSWORD,
    database: DATABASE,
  });
  await sampler.connect();
  let saturationDone: () => void = () => undefined;
  const backendsSampled = sampleBackends(
    sampler,
    DATABASE,
    20,
    new Promise<void>((resolve) => (saturationDone = resolve)),
  );
  const switchesBefore = contextSwitches(api.pid);
  const saturationBatchesBefore = await heartbeatBatches(port);
  const saturationBeatBatchesBefore = await heartbeatBatches(port, true);
  // WAL written meanwhile (the whole server's; nothing else writes during the phase but
  // autovacuum, and full-page images after a checkpoint): what PostgreSQL writes per heartbeat.
  const [walBefore] = await dataSource.query<{ lsn: string }[]>(
    'SELECT pg_current_wal_insert_lsn()::text AS lsn',
  );
  const saturationCpu = await cpuPercentOf(api.pid, async () => {
    saturationRate = await closedLoop(seconds, flags.concurrency as number, () =>
      timed(saturated, 200, () => heartbeat(roster[cursor++ % roster.length] as Player)),
    );
  });
  saturationDone();
  const [walWritten] = await dataSource.query<{ bytes: string }[]>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS bytes',
    [walBefore?.lsn],
  );
  const switchesAfter = contextSwitches(api.pid);
  const saturationBatchSize = meanBatchSize(saturationBatchesBefore, await heartbeatBatches(port));
  const saturationBeatBatchSize = meanBatchSize(
    saturationBeatBatchesBefore,
    await heartbeatBatches(port, true),
  );
  const perHeartbeat = (count: number) => round1(count / Math.max(1, saturated.count));
  const saturationSwitches = {
    voluntary: perHeartbeat(switchesAfter.voluntary - switchesBefore.voluntary),
    involuntary: perHeartbeat(switchesAfter.involuntary - switchesBefore.involuntary),
  };
  const saturationLoop = await eventLoopDelay(port);
  const saturationBackends = await backendsSampled;
  await sampler.end();

  // ---- database ceiling: the heartbeat's transaction shape in pgbench --------------------------
  // The same durability as the API's heartbeat commits (HEARTBEAT_SYNCHRONOUS_COMMIT), or the
  // ratio would compare a commit that waits for the disk with one that does not.
  const apiEnv = envPairs('api-env', flags['api-env'] as string);
  const heartbeatSynchronousCommit =
    (apiEnv.HEARTBEAT_SYNCHRONOUS_COMMIT ??
      String(new ApiConfig().HEARTBEAT_SYNCHRONOUS_COMMIT)) === 'true';
  // Set inside the insert: the API pipelines its SET LOCAL with its first statement, so a
  // statement of its own here would add a round trip the API does not pay and lower the ceiling.
  const relaxedCommit = heartbeatSynchronousCommit
    ? ''
    : ` AND set_config('synchronous_commit', 'off', true) = 'off'`;
  progress(
    `ceiling: pgbench, the heartbeat transaction, ${flags.concurrency} clients for ${seconds} s`,
  );
  await dataSource.query(`CREATE TABLE bench_tickets AS
    SELECT row_number() OVER (ORDER BY id) AS n, id, player_id FROM queue_tickets WHERE state = 'SEARCHING'`);
  await dataSource.query(`ALTER TABLE bench_tickets ADD PRIMARY KEY (n)`);
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-bench-api-'));
  const script = path.join(dir, 'heartbeat.pgbench.sql');
  writeFileSync(
    script,
    `\\set n random(1, ${roster.length})
BEGIN;
INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, response_status, response_body, completed_at)
  SELECT player_id, md5(random()::text || clock_timestamp()::text), '\\x00', 'pgbench', 'completed', 200, '{}', now()
    FROM bench_tickets WHERE n = :n${relaxedCommit};
UPDATE queue_tickets SET last_heartbeat_at = now(), updated_at = clock_timestamp()
 WHERE id = (SELECT id FROM bench_tickets WHERE n = :n);
COMMIT;
`,
  );
  const pgbench = startChild(
    'pgbench',
    PGBENCH,
    [
      '-n',
      '-f',
      script,
      '-c',
      String(flags.concurrency),
      '-j',
      '2',
      '-T',
      String(seconds),
      '-M',
      'prepared',
    ],
    {
      PATH: env.PATH,
      PGHOST: LOCALHOST,
      PGPORT: String(service.DATABASE_PORT),
      PGUSER: service.DATABASE_USER,
      PGDATABASE: DATABASE,
      ...(service.DATABASE_PASSWORD ? { PGPASSWORD: service.DATABASE_PASSWORD } : {}),
    },
  );
  const code = await pgbench.exited;
  const checkpointed = await checkpointedTickets(maintenancePort);
  await maintenance.stop();
  rmSync(dir, { recursive: true, force: true });
  const tps = Number(/tps = ([0-9.]+)/.exec(pgbench.output())?.[1]);
  if (code !== 0 || !Number.isFinite(tps))
    throw new Error(`pgbench failed (${code}):\n${pgbench.output()}`);

  await api.stop();
  await dataSource.destroy();
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  // The run's candidates: the prefix is per run, so nothing else shares it.
  const redis = new Redis({
    host: LOCALHOST,
    port: service.REDIS_PORT,
    password: service.REDIS_PASSWORD,
  });
  await deleteRedisPrefix(redis, PREFIX);
  redis.disconnect();

  const heartbeatSummary = paced.summary();
  const result = {
    bench: 'api',
    players,
    heartbeat_interval_ms: intervalMs,
    paced_by: pacedByCeiling
      ? `${flags['pace-percent'] as number}% of ceilings.bare_nest_route.requests_per_s`
      : '--heartbeat-interval-ms',
    api_env: apiEnv,
    setup: {
      seconds: round1(setupSeconds),
      through_routes: { players: httpPlayers, seconds: round1(httpSetupSeconds) },
      through_stores_in_bulk: { players: players - httpPlayers, seconds: round1(bulkSetupSeconds) },
      session: sessionLatency.summary(),
      probe_answer: answerLatency.summary(),
      ticket_create: createLatency.summary(),
    },
    heartbeat: {
      target_per_s: round1(rate),
      achieved_per_s: round1(heartbeatSummary.count / seconds),
      mean_batch_size: pacedBatchSize,
      mean_liveness_batch_size: pacedBeatBatchSize,
      ...heartbeatSummary,
      [`over_${SLOW_HEARTBEAT_MS}ms_per_second`]: slowPerSecond,
      api_event_loop_delay: pacedLoop,
      warmup: {
        seconds: warmupSeconds,
        ...warmup.summary(),
        [`over_${SLOW_HEARTBEAT_MS}ms_per_second`]: warmupSlowPerSecond,
      },
      bench_event_loop_delay: {
        p50_ms: round1(benchLoop.percentile(50) / 1e6),
        p99_ms: round1(benchLoop.percentile(99) / 1e6),
        max_ms: round1(benchLoop.max / 1e6),
      },
    },
    api_process: {
      cpu_percent_of_one_core: pacedCpu.cpu_percent,
      rss_mb: pacedRss,
      idle_rss_mb: idleRss,
      api_rss_mb_per_10000_players: round1((pacedRss * 10_000) / players),
      api_rss_mb_above_idle_per_10000_players: round1(((pacedRss - idleRss) * 10_000) / players),
    },
    liveness_checkpoint: { tickets_written: checkpointed },
    saturation: {
      heartbeats_per_s: saturationRate,
      cpu_percent_of_one_core: saturationCpu.cpu_percent,
      ...saturated.summary(),
      api_event_loop_delay: saturationLoop,
      api_context_switches_per_heartbeat: saturationSwitches,
      mean_batch_size: saturationBatchSize,
      mean_liveness_batch_size: saturationBeatBatchSize,
      wal_bytes_per_heartbeat: Math.round(Number(walWritten?.bytes) / Math.max(1, saturated.count)),
      api_backends: saturationBackends,
    },
    ceilings: {
      bare_nest_route: {
        requests_per_s: bareRate,
        cpu_percent_of_one_core: bareCpu.cpu_percent,
        ...bareLatency.summary(),
      },
      pgbench_heartbeat_tps: Math.round(tps),
      pgbench_heartbeat_synchronous_commit: heartbeatSynchronousCommit,
      // Three decimals: rounded to one, 0.37 and 0.41 both printed as 0.4 against a 0.4 target
      // (and to two, 0.398 still did).
      saturation_vs_pgbench: Math.round((1000 * saturationRate) / tps) / 1000,
      saturation_vs_bare_nest_route: Math.round((1000 * saturationRate) / bareRate) / 1000,
    },
    targets: {
      // Issue 33's: paced at a quarter of the bare route, p99 within 50 ms and no error; the
      // saturation at least 0.4 x the bare route.
      paced_p99_le_50ms: heartbeatSummary.p99_ms <= PACED_P99_TARGET_MS,
      paced_without_errors: heartbeatSummary.errors === 0 && warmup.errors === 0,
      saturation_ge_0_4_of_bare_nest_route: saturationRate >= SATURATION_TARGET_OF_BARE * bareRate,
    },
  };
  progress(`results written to ${writeResults(REPO_ROOT, flags.results as string, result)}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  agent.destroy();
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench:api] failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
