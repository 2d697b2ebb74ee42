/**
 * Retention benchmark: how fast the real RetentionPurger deletes a backlog of expired
 * idempotency keys, alone and while a real API process serves a steady heartbeat load, and what
 * the purge does to the heartbeats' latency (each heartbeat writes an idempotency key into the
 * very table being purged). `npm run bench:retention -- --help`; figures in docs/BENCHMARKS.md.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { allMigrations } from '@matchplane/migrations';
import { Migrator, dataSourceOptions, quoteIdentifier } from '@matchplane/persistence';
import { PlayerClient } from '@matchplane/sdk';
import { retentionPurgerOptions } from '../../apps/maintenance/src/retention/retention.module';
import { discoverRetentionPolicies } from '../../apps/maintenance/src/retention/retention-policy.registry';
import {
  RetentionPurger,
  sleep as abortableSleep,
  type RetentionPassReport,
} from '../../apps/maintenance/src/retention/retention.purger';
import { parseFlags, usage, UsageError, type FlagSpec } from './bench.cli';
import {
  cpuUsage,
  deleteRedisPrefix,
  freePort,
  installCleanup,
  isStopping,
  round1,
  sampleCpu,
  sleep,
  startChild,
  waitUntil,
  type BenchChild,
  type CpuUsage,
} from './bench.processes';
import { percentiles, type Percentiles } from './delivery.recorder';

const LOCALHOST = '127.0.0.1';
const DATABASE = 'mp_bench_retention';
const PREFIX = 'mp_bench_retention';
const SEED_PLAYERS = 1_000;
const WARM_UP_SECONDS = 3;
const SETUP_CONCURRENCY = 16;
const DEFAULTS = loadConfig(MaintenanceConfig, {});

const FLAGS: FlagSpec[] = [
  {
    name: 'keys',
    description: 'expired idempotency keys seeded before each purge',
    int: { min: 1, max: 20_000_000, default: 1_000_000 },
  },
  {
    name: 'players',
    description: 'players with a searching ticket, heartbeating in turn',
    int: { min: 1, max: 20_000, default: 2_000 },
  },
  {
    // 300: on the 2-core test machine the API saturates at 400-500 heartbeats/s once other work
    // shares it, and a saturated API measures its own queue (seconds), not the purge's effect.
    name: 'rate',
    description: 'heartbeats/s, all players together',
    int: { min: 1, max: 20_000, default: 300 },
  },
  {
    name: 'seconds',
    description: 'length of each heartbeat window without a purge (before and after)',
    int: { min: 1, max: 600, default: 20 },
  },
  {
    name: 'batch-size',
    description: 'RETENTION_BATCH_SIZE',
    int: { min: 1, max: 100_000, default: DEFAULTS.RETENTION_BATCH_SIZE },
  },
  {
    name: 'batch-pause-ms',
    description: 'RETENTION_BATCH_PAUSE_MS',
    int: { min: 0, max: 60_000, default: DEFAULTS.RETENTION_BATCH_PAUSE_MS },
  },
  {
    name: 'pressure-pause-ms',
    description: 'RETENTION_PRESSURE_PAUSE_MS',
    int: { min: 0, max: 600_000, default: DEFAULTS.RETENTION_PRESSURE_PAUSE_MS },
  },
  {
    name: 'autovacuum',
    description:
      "server: rely on the server's autovacuum; stand-in: the bench vacuums like one autovacuum worker; auto: stand-in when the server runs with autovacuum off",
    string: { default: 'auto' },
  },
  {
    name: 'naptime-ms',
    description: "the stand-in's autovacuum_naptime: how often it checks the table",
    int: { min: 100, max: 600_000, default: 1_000 },
  },
  {
    name: 'build-dir',
    description: 'the build the API runs from (default: the one this bench runs from, dist/)',
    string: { default: path.resolve(__dirname, '../..') },
  },
  {
    name: 'results',
    description: 'also write the result JSON here (relative to the working directory)',
    string: { default: '' },
  },
  { name: 'help', description: 'print this and exit', switch: true },
];

interface Options {
  keys: number;
  players: number;
  rate: number;
  seconds: number;
  batchSize: number;
  batchPauseMs: number;
  pressurePauseMs: number;
  autovacuum: 'auto' | 'server' | 'stand-in';
  naptimeMs: number;
  buildDir: string;
  results: string;
}

function progress(line: string): void {
  process.stderr.write(`[bench:retention] ${line}\n`);
}

// ---- database ----------------------------------------------------------------------------------

interface Settings {
  options: Options;
  service: ServiceConfig;
  adminDatabase: string;
}

async function withAdminClient<T>(
  settings: Settings,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  const { service } = settings;
  const client = new Client({
    host: LOCALHOST,
    port: service.DATABASE_PORT,
    user: service.DATABASE_USER,
    password: service.DATABASE_PASSWORD,
    database: settings.adminDatabase,
    application_name: 'mp-bench-admin',
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `count` idempotency keys completed 3-4 days ago (past the 48 h window), shaped like the
 * heartbeat keys they stand for (a 32-byte request hash, the heartbeat route, a ticket response
 * body), spread over the seed players.
 */
async function seedExpiredKeys(dataSource: DataSource, count: number): Promise<void> {
  const players = await dataSource.query<{ id: string }[]>(
    `INSERT INTO players (id) SELECT gen_random_uuid() FROM generate_series(1, $1) RETURNING id`,
    [SEED_PLAYERS],
  );
  const started = performance.now();
  await dataSource.query(
    `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, response_status,
                                   response_body, created_at, completed_at)
     SELECT ($1::uuid[])[1 + g % $3], 'seed-' || g, sha256(g::text::bytea),
            'POST queue/tickets/:id/heartbeat', 'completed', 200,
            jsonb_build_object('id', gen_random_uuid(), 'state', 'SEARCHING', 'revision', 1,
                               'mode', 'duel', 'regionsMeasured', jsonb_build_array('eu-west'),
                               'predictedRttMs', jsonb_build_object('eu-west', 12.5),
                               'enqueuedAt', at, 'lastHeartbeatAt', at, 'waitSeconds', 10),
            at, at
       FROM generate_series(1, $2) g,
            LATERAL (SELECT now() - interval '3 days' - make_interval(secs => g * 86400.0 / $2) AS at) t`,
    [players.map((row) => row.id), count, SEED_PLAYERS],
  );
  progress(`seeded ${count} expired keys in ${round1((performance.now() - started) / 1000)} s`);
  await dataSource.query('VACUUM ANALYZE idempotency_keys');
}

/** Dead tuples past the point where autovacuum would start on the table (its own formula). */
const VACUUM_DUE_SQL = `SELECT s.n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
         + current_setting('autovacuum_vacuum_scale_factor')::float8 * greatest(c.reltuples, 0) AS due
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
 WHERE s.relid = $1::regclass`;

/**
 * What one autovacuum worker does for the purged table, for a server running with autovacuum
 * off (as the test machine's does). Without it the purger's pressure check sees dead tuples pile
 * up for good and slows to one batch per RETENTION_PRESSURE_PAUSE_MS, which no production
 * server would show. Every naptime it checks autovacuum's trigger and, when due, runs VACUUM
 * throttled as autovacuum is by default (cost delay 2 ms, cost limit 200).
 */
class AutovacuumStandIn {
  vacuums = 0;
  vacuumSeconds = 0;
  private running = false;
  private loop?: Promise<void>;
  private readonly wake = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly table: string,
    private readonly naptimeMs: number,
  ) {}

  async start(): Promise<void> {
    await this.client.query(`SET vacuum_cost_delay = '2ms'`);
    await this.client.query(`SET vacuum_cost_limit = 200`);
    this.running = true;
    this.loop = this.run().catch((error: unknown) => {
      this.running = false;
      progress(
        `autovacuum stand-in stopped: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const [row] = (await this.client.query<{ due: boolean }>(VACUUM_DUE_SQL, [this.table])).rows;
      if (row?.due) {
        const started = performance.now();
        await this.client.query(`VACUUM ${this.table}`);
        this.vacuums += 1;
        this.vacuumSeconds += (performance.now() - started) / 1000;
      }
      await abortableSleep(this.naptimeMs, this.wake.signal);
    }
  }
}

// ---- heartbeat load ----------------------------------------------------------------------------

interface Heartbeater {
  client: PlayerClient;
  ticketId: string;
  busy: boolean;
}

interface WindowResult {
  seconds: number;
  sent: number;
  ok: number;
  failed: number;
  /** Slots no player was free for (every one still waiting for its last answer). */
  skipped: number;
  achievedPerS: number;
  latencyMs: Percentiles;
  /** How late the load issued heartbeats (ms behind schedule): a busy bench process shows here. */
  issueLagMs: Percentiles;
  cpu: CpuUsage;
  firstError?: string;
}

/**
 * Open loop: the k-th heartbeat is due at start + k / rate, whether or not earlier ones have been
 * answered, so a slow API shows up as latency rather than as a lower rate. It goes to the next
 * player in turn with no heartbeat in flight, as a real client sends its next heartbeat only after
 * the last one (piling several on one ticket would queue them on its row lock, a convoy no real
 * load makes); when every player is waiting the slot is skipped and counted. Latency is measured
 * from the moment a heartbeat is sent to its answer.
 */
class HeartbeatLoad {
  private running = false;
  private loop?: Promise<void>;
  private inFlight = 0;
  private window?: {
    started: number;
    sent: number;
    ok: number;
    failed: number;
    skipped: number;
    /** Sent in this window and not answered yet: the window's figures wait for them. */
    pending: number;
    latencies: number[];
    lags: number[];
    cpu: ReturnType<typeof sampleCpu>;
    firstError?: string;
  };

  constructor(
    private readonly beaters: readonly Heartbeater[],
    private readonly rate: number,
    private readonly observedPids: readonly number[],
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await waitUntil(() => this.inFlight === 0, 'heartbeats in flight to finish', {
      timeoutMs: 30_000,
      intervalMs: 20,
    }).catch(() => undefined);
  }

  beginWindow(): void {
    this.window = {
      started: performance.now(),
      sent: 0,
      ok: 0,
      failed: 0,
      skipped: 0,
      pending: 0,
      latencies: [],
      lags: [],
      cpu: sampleCpu(this.observedPids, [DATABASE]),
    };
  }

  /**
   * Closes the window; its figures count every heartbeat sent in it, answered before or after.
   * Also returns the window's latencies, so windows can be pooled.
   */
  async endWindow(): Promise<[WindowResult, number[]]> {
    const window = this.window;
    if (!window) throw new Error('no window open');
    this.window = undefined;
    const seconds = (performance.now() - window.started) / 1000;
    const cpu = cpuUsage(this.observedPids, window.cpu, sampleCpu(this.observedPids, [DATABASE]));
    await waitUntil(() => window.pending === 0, "the window's heartbeats to be answered", {
      timeoutMs: 60_000,
      intervalMs: 10,
    }).catch(() => undefined);
    const result: WindowResult = {
      seconds: round1(seconds),
      sent: window.sent,
      ok: window.ok,
      failed: window.failed,
      skipped: window.skipped,
      achievedPerS: round1(window.ok / seconds),
      latencyMs: percentiles(window.latencies),
      issueLagMs: percentiles(window.lags),
      cpu,
      ...(window.firstError ? { firstError: window.firstError } : {}),
    };
    return [result, window.latencies];
  }

  private async run(): Promise<void> {
    const start = performance.now();
    let issued = 0;
    let cursor = 0;
    while (this.running) {
      const due = Math.floor(((performance.now() - start) * this.rate) / 1000);
      for (; issued < due; issued += 1) {
        const dueAt = start + (issued * 1000) / this.rate;
        let beater: Heartbeater | undefined;
        for (let tried = 0; tried < this.beaters.length && !beater; tried += 1) {
          const candidate = this.beaters[cursor];
          cursor = (cursor + 1) % this.beaters.length;
          if (candidate && !candidate.busy) beater = candidate;
        }
        if (beater) this.beat(beater, performance.now() - dueAt);
        else if (this.window) this.window.skipped += 1;
      }
      await sleep(2);
    }
  }

  private beat(beater: Heartbeater, lagMs: number): void {
    const window = this.window;
    if (window) {
      window.sent += 1;
      window.pending += 1;
      window.lags.push(lagMs);
    }
    this.inFlight += 1;
    beater.busy = true;
    const sentAt = performance.now();
    beater.client.heartbeat(beater.ticketId).then(
      () => {
        this.inFlight -= 1;
        beater.busy = false;
        // Counted in the window it was sent in, even once that one is closed.
        if (window) {
          window.pending -= 1;
          window.ok += 1;
          window.latencies.push(performance.now() - sentAt);
        }
      },
      (error: unknown) => {
        this.inFlight -= 1;
        beater.busy = false;
        if (window) {
          window.pending -= 1;
          window.failed += 1;
          window.firstError ??= error instanceof Error ? error.message : String(error);
        }
      },
    );
  }
}

async function createHeartbeaters(baseUrl: string, count: number): Promise<Heartbeater[]> {
  const beaters: Heartbeater[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < count) {
        next += 1;
        // No retries: a failed heartbeat must count as one, not hide behind a second attempt.
        const client = new PlayerClient({ baseUrl, retries: 0 });
        await client.createSession();
        await client.probe('eu-west', { samples: 1 });
        const ticket = await client.enqueue('duel');
        beaters.push({ client, ticketId: ticket.id, busy: false });
      }
    }),
  );
  return beaters;
}

// ---- the run -----------------------------------------------------------------------------------

interface PurgeResult {
  purged: number;
  seconds: number;
  rowsPerS: number;
  batches: number;
  pressuredBatches: number;
  outcome: RetentionPassReport['outcome'];
  errors: number;
  /** VACUUMs the stand-in ran meanwhile, and their time. */
  vacuums: number;
  vacuumSeconds: number;
  cpu: CpuUsage;
}

async function purge(
  purger: RetentionPurger,
  observedPids: readonly number[],
  standIn: AutovacuumStandIn | undefined,
): Promise<PurgeResult> {
  const before = sampleCpu(observedPids, [DATABASE]);
  const vacuumsBefore = { count: standIn?.vacuums ?? 0, seconds: standIn?.vacuumSeconds ?? 0 };
  const report = await purger.pass();
  const cpu = cpuUsage(observedPids, before, sampleCpu(observedPids, [DATABASE]));
  const purged = report.purged.idempotency_keys ?? 0;
  const seconds = report.durationMs / 1000;
  return {
    purged,
    seconds: round1(seconds),
    rowsPerS: Math.round(purged / seconds),
    batches: report.batches,
    pressuredBatches: report.pressuredBatches,
    outcome: report.outcome,
    errors: report.errors.length,
    vacuums: (standIn?.vacuums ?? 0) - vacuumsBefore.count,
    vacuumSeconds: round1((standIn?.vacuumSeconds ?? 0) - vacuumsBefore.seconds),
    cpu,
  };
}

function describeWindow(name: string, result: WindowResult): string {
  const { p50, p95, p99, max } = result.latencyMs;
  return (
    `${name}: ${result.achievedPerS} heartbeats/s over ${result.seconds} s, latency p50 ${p50} / p95 ${p95} / ` +
    `p99 ${p99} / max ${max} ms, ${result.failed} failed, ${result.skipped} skipped, issue lag p99 ${result.issueLagMs.p99} ms, ` +
    `cpu api ${result.cpu.pids}% postgres ${result.cpu.postgres}% bench ${result.cpu.bench}% other ${result.cpu.other}%` +
    (result.firstError ? `; first failure: ${result.firstError}` : '')
  );
}

function describePurge(name: string, result: PurgeResult): string {
  return (
    `${name}: ${result.purged} keys in ${result.seconds} s = ${result.rowsPerS} rows/s ` +
    `(${result.batches} batches, ${result.pressuredBatches} slowed by database pressure, ${result.errors} errors, ` +
    `${result.vacuums} stand-in vacuums taking ${result.vacuumSeconds} s, ` +
    `outcome ${result.outcome}; cpu postgres ${result.cpu.postgres}% other ${result.cpu.other}%)`
  );
}

function optionsFrom(argv: readonly string[]): Options {
  const command = 'npm run bench:retention --';
  const summary =
    'Retention purge benchmark (see docs/BENCHMARKS.md). Needs PostgreSQL and Redis on 127.0.0.1 and a build.';
  try {
    const flags = parseFlags(argv, FLAGS);
    if (flags.help === true) {
      process.stdout.write(usage(command, summary, FLAGS));
      process.exit(0);
    }
    const buildDir = path.resolve(flags['build-dir'] as string);
    if (!existsSync(path.join(buildDir, 'apps/api/src/main.js'))) {
      throw new UsageError(`--build-dir: no apps/api/src/main.js under ${buildDir}`);
    }
    const autovacuum = flags.autovacuum as string;
    if (autovacuum !== 'auto' && autovacuum !== 'server' && autovacuum !== 'stand-in') {
      throw new UsageError(
        `--autovacuum must be auto, server or stand-in, got ${JSON.stringify(autovacuum)}`,
      );
    }
    return {
      keys: flags.keys as number,
      players: flags.players as number,
      rate: flags.rate as number,
      seconds: flags.seconds as number,
      batchSize: flags['batch-size'] as number,
      batchPauseMs: flags['batch-pause-ms'] as number,
      pressurePauseMs: flags['pressure-pause-ms'] as number,
      autovacuum,
      naptimeMs: flags['naptime-ms'] as number,
      buildDir,
      results: flags.results as string,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench:retention: ${error.message}\n\n${usage(command, summary, FLAGS)}`);
    process.exit(2);
  }
}

async function startApi(settings: Settings): Promise<{ api: BenchChild; baseUrl: string }> {
  const { service, options } = settings;
  const port = await freePort();
  const api = startChild(
    'api',
    process.execPath,
    [path.join(options.buildDir, 'apps/api/src/main.js')],
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      DATABASE_HOST: LOCALHOST,
      DATABASE_PORT: String(service.DATABASE_PORT),
      DATABASE_USER: service.DATABASE_USER,
      DATABASE_NAME: DATABASE,
      REDIS_HOST: LOCALHOST,
      REDIS_PORT: String(service.REDIS_PORT),
      REDIS_KEY_PREFIX: PREFIX,
      API_HOST: LOCALHOST,
      API_PORT: String(port),
      LOG_LEVEL: 'warn',
      // Every heartbeater signs in from 127.0.0.1, which no per-address limit would allow.
      API_RATE_LIMIT_SESSIONS_PER_ADDRESS: '0',
      API_RATE_LIMIT_REQUESTS_PER_ADDRESS: '0',
      ...(service.DATABASE_PASSWORD ? { DATABASE_PASSWORD: service.DATABASE_PASSWORD } : {}),
      ...(service.REDIS_PASSWORD ? { REDIS_PASSWORD: service.REDIS_PASSWORD } : {}),
    },
  );
  const baseUrl = `http://${LOCALHOST}:${port}`;
  await waitUntil(async () => {
    if (!api.alive()) throw new Error(`api exited:\n${api.output()}`);
    const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    return response.status === 200;
  }, 'the api to be healthy').catch((error: Error) => {
    throw new Error(`${error.message}\n${api.output()}`);
  });
  return { api, baseUrl };
}

/** The API's own account of failed heartbeats: its warnings and errors, the last few. */
function reportWarnings(child: BenchChild): void {
  const lines = child
    .output()
    .split('\n')
    .filter(
      (line) => line.trim() !== '' && !/^\{"level":"(log|info|debug|verbose|trace)"/.test(line),
    );
  if (lines.length > 0) progress(`${child.name} said:\n${lines.slice(-10).join('\n')}`);
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2));
  const migrate = loadConfig(MigrateConfig);
  const settings: Settings = {
    options,
    service: { ...loadConfig(ServiceConfig), DATABASE_HOST: LOCALHOST, REDIS_HOST: LOCALHOST },
    adminDatabase: migrate.DATABASE_ADMIN_NAME,
  };
  const { service } = settings;
  const redis = new Redis({
    host: LOCALHOST,
    port: service.REDIS_PORT,
    password: service.REDIS_PASSWORD,
  });
  const closers: (() => Promise<unknown>)[] = [];
  const cleanUp = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    closers.length = 0;
  };
  installCleanup(cleanUp);
  closers.push(() => redis.quit());
  closers.push(() => deleteRedisPrefix(redis, PREFIX));

  try {
    const conditions = {
      cores: cpus().length,
      loadavg_at_start: loadavg().map(round1),
      node: process.version,
    };
    progress(
      `setup: database ${DATABASE}, build ${options.buildDir}, ${options.keys} keys, ${options.players} players ` +
        `heartbeating at ${options.rate}/s; ${conditions.cores} cores, load average ${conditions.loadavg_at_start.join(' ')}`,
    );
    await deleteRedisPrefix(redis, PREFIX);
    await withAdminClient(settings, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(DATABASE)} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${quoteIdentifier(DATABASE)}`);
    });
    closers.push(() =>
      withAdminClient(settings, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(DATABASE)} WITH (FORCE)`),
      ),
    );
    const dataSource = new DataSource(
      dataSourceOptions(
        { ...service, DATABASE_NAME: DATABASE, DATABASE_POOL_SIZE: 3 },
        { migrations: allMigrations, applicationName: 'mp-bench-maintenance' },
      ),
    );
    await dataSource.initialize();
    closers.push(() => dataSource.destroy());
    await new Migrator(dataSource).up();

    const [setting] = await dataSource.query<{ autovacuum: string }[]>(`SHOW autovacuum`);
    const serverAutovacuum = setting?.autovacuum === 'on';
    const useStandIn =
      options.autovacuum === 'stand-in' || (options.autovacuum === 'auto' && !serverAutovacuum);
    let standIn: AutovacuumStandIn | undefined;
    if (useStandIn) {
      const client = new Client({
        host: LOCALHOST,
        port: service.DATABASE_PORT,
        user: service.DATABASE_USER,
        password: service.DATABASE_PASSWORD,
        database: DATABASE,
        application_name: 'mp-bench-autovacuum',
      });
      await client.connect();
      closers.push(() => client.end());
      standIn = new AutovacuumStandIn(client, 'idempotency_keys', options.naptimeMs);
      await standIn.start();
      closers.push(() => standIn?.stop() ?? Promise.resolve());
    }
    progress(
      `server autovacuum ${serverAutovacuum ? 'on' : 'off'}; ` +
        (standIn ? `the bench stands in for it (naptime ${options.naptimeMs} ms)` : 'no stand-in'),
    );

    // The production purger and windows; only the budget is lifted, so one pass takes the backlog.
    const purger = new RetentionPurger(
      dataSource,
      {
        ...retentionPurgerOptions(DEFAULTS),
        batchSize: options.batchSize,
        batchPauseMs: options.batchPauseMs,
        pressurePauseMs: options.pressurePauseMs,
        passBudgetMs: 3_600_000,
      },
      await discoverRetentionPolicies(),
    );

    const { api, baseUrl } = await startApi(settings);
    closers.push(() => api.stop());
    progress(`creating ${options.players} players with a searching ticket through the API`);
    const beaters = await createHeartbeaters(baseUrl, options.players);
    const observed = [api.pid];

    progress('purge alone');
    await seedExpiredKeys(dataSource, options.keys);
    const alone = await purge(purger, observed, standIn);
    progress(describePurge('purge alone', alone));
    await dataSource.query('VACUUM ANALYZE idempotency_keys');

    await seedExpiredKeys(dataSource, options.keys);
    const load = new HeartbeatLoad(beaters, options.rate, observed);
    load.start();
    closers.push(() => load.stop());
    await sleep(WARM_UP_SECONDS * 1000);

    progress(`heartbeats without a purge, ${options.seconds} s`);
    load.beginWindow();
    await sleep(options.seconds * 1000);
    const [before, beforeLatencies] = await load.endWindow();
    progress(describeWindow('before purge', before));

    progress('purge under the heartbeat load');
    load.beginWindow();
    const underLoad = await purge(purger, observed, standIn);
    const [during] = await load.endWindow();
    progress(describePurge('purge under load', underLoad));
    progress(describeWindow('during purge', during));

    // A control: the same load once the purge is over, to tell its effect from drift on the machine.
    load.beginWindow();
    await sleep(options.seconds * 1000);
    const [after, afterLatencies] = await load.endWindow();
    progress(describeWindow('after purge', after));
    await load.stop();
    await api.stop();
    reportWarnings(api);

    // The windows before and after the purge pooled: one spike from other work on the machine in
    // either window would otherwise decide the comparison.
    const without = percentiles([...beforeLatencies, ...afterLatencies]);
    const ratio =
      without.p99 > 0 ? Math.round((during.latencyMs.p99 / without.p99) * 100) / 100 : null;
    const result = {
      keys: options.keys,
      purge_alone_rows_per_s: alone.rowsPerS,
      purge_under_load_rows_per_s: underLoad.rowsPerS,
      heartbeat_rate_per_s: options.rate,
      heartbeat_p99_ms_without_purge: without.p99,
      heartbeat_p99_ms_during_purge: during.latencyMs.p99,
      heartbeat_p99_ms_before_purge: before.latencyMs.p99,
      heartbeat_p99_ms_after_purge: after.latencyMs.p99,
      p99_ratio_during_to_without: ratio,
      targets: { p99_during_at_most_1_5x_without: ratio !== null && ratio <= 1.5 },
      conditions: {
        ...conditions,
        loadavg_at_end: loadavg().map(round1),
        server_autovacuum: serverAutovacuum,
        autovacuum_stand_in_naptime_ms: standIn ? options.naptimeMs : null,
      },
      details: {
        players: options.players,
        batch_size: options.batchSize,
        batch_pause_ms: options.batchPauseMs,
        pressure_pause_ms: options.pressurePauseMs,
        purge_alone: alone,
        purge_under_load: underLoad,
        heartbeats_before_purge: before,
        heartbeat_latency_ms_without_purge: without,
        heartbeats_during_purge: during,
        heartbeats_after_purge: after,
      },
      timestamp: new Date().toISOString(),
    };
    if (options.results !== '') {
      const file = path.resolve(options.results);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
      progress(`results written to ${file}`);
    }
    await cleanUp();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    if (!isStopping()) await cleanUp();
    throw error;
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (isStopping()) return;
    process.stderr.write(
      `bench:retention failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
