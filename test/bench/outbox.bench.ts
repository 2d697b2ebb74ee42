/**
 * Outbox delivery benchmark: how fast committed outbox rows reach a Redis pub/sub channel through
 * real dispatcher processes (the delivery sink of test/dispatcher-sink publishes the bench's
 * ticket events as the client-notification subscriber publishes match events), against
 * PostgreSQL's own ceiling for the writing transaction (pgbench) and against graphile-worker doing the same job with per-aggregate queues.
 * `npm run bench:outbox -- --help`; docs/BENCHMARKS.md has the figures and how to read them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client, Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { runMigrations } from 'graphile-worker';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { allMigrations } from '@matchplane/migrations';
import { notificationPattern } from '@matchplane/contracts';
import { buildEnvelope, OutboxSignal, OutboxWriter, type EventPayloads } from '@matchplane/outbox';
import {
  Migrator,
  dataSourceOptions,
  quoteIdentifier,
  returnedRows,
  runInTransaction,
} from '@matchplane/persistence';
import { deliverySinkPattern } from '../dispatcher-sink/delivery-sink.module';
import {
  aggregateId,
  clearOutbox,
  createBenchAggregates,
  pgbenchScripts,
  runPgbench,
  type Ceiling,
} from './pgbench-ceiling';
import {
  ClusterWatch,
  startScratchCluster,
  statementTable,
  type StatementReport,
} from './postgres-cost';
import { parseFlags, usage, UsageError, type FlagSpec } from './bench.cli';
import {
  REPO_ROOT,
  cpuUsage,
  freePort,
  installCleanup,
  isStopping,
  sampleCpu,
  sleep,
  startNodeChild,
  waitUntil,
  type BenchChild,
  type CpuUsage,
} from './bench.processes';
import {
  DeliveryRecorder,
  percentiles,
  type Percentiles,
  type PhaseRecording,
  type PhaseResult,
} from './delivery.recorder';
import {
  PEER_READY_LINE,
  PEER_TASK,
  type PeerJobPayload,
  type PeerWorkerOptions,
} from './graphile-peer.worker';

const LOCALHOST = '127.0.0.1';
const OUTBOX_DATABASE = 'mp_bench_outbox';
const PEER_DATABASE = 'mp_bench_graphile';
const OUTBOX_PREFIX = 'mp_bench_outbox';
const PEER_PREFIX = 'mp_bench_peer';
/** Every write is a ticket bouncing between SEARCHING and MATCHED, so each revision validates. */
const PLAYER_ID = randomUUID();
const MATCH_ID = randomUUID();
const ENQUEUED_AT = new Date().toISOString();
const MAX_TRANSACTIONS_PER_WRITER = 2_000_000;
const MAX_FAILED_TRANSACTIONS = 100;
const WARM_UP_SECONDS = 2;

const FLAGS: FlagSpec[] = [
  {
    name: 'writers',
    description: 'concurrent writer loops (and pgbench clients)',
    int: { min: 1, max: 128, default: 8 },
  },
  {
    name: 'seconds',
    description: 'length of each measured phase',
    int: { min: 1, max: 600, default: 10 },
  },
  {
    name: 'aggregates',
    description: 'aggregates the writers pick from at random',
    int: { min: 1, max: 1_000_000, default: 1000 },
  },
  {
    name: 'rate',
    description:
      "events/s, all writers together, in the latency phase (0: 0.3 x the writers' shape ceiling pgbench measures in the same run, half the throughput target)",
    int: { min: 0, max: 100_000, default: 0 },
  },
  {
    name: 'dispatchers',
    description: 'dispatcher processes (and graphile-worker processes)',
    int: { min: 1, max: 16, default: 1 },
  },
  {
    name: 'concurrency',
    description: "DISPATCHER_CONCURRENCY, and the peer's concurrency",
    int: { min: 1, max: 1000, default: 64 },
  },
  {
    name: 'peer-concurrency',
    // 8 was its fastest here without localQueue (2: 328/s, 4: 415/s, 8: 507/s, 64: 245/s delivered).
    description: "graphile-worker's concurrency (0: same as --concurrency)",
    int: { min: 0, max: 1000, default: 8 },
  },
  {
    // Off by default: in 0.17.3 a batch fetch runs jobs of one named queue concurrently, which
    // breaks the per-aggregate order the comparison is about (graphile/worker#621).
    name: 'peer-local-queue',
    description:
      'graphile-worker localQueue.size (0 or 1: off; breaks named-queue order in 0.17.3)',
    int: { min: 0, max: 10_000, default: 0 },
  },
  {
    name: 'peer-complete-batch-ms',
    description: 'graphile-worker completeJobBatchDelay (0: off)',
    int: { min: 0, max: 10_000, default: 0 },
  },
  {
    name: 'dispatcher-env',
    description: 'extra dispatcher environment, K=V[,K=V...] (e.g. DATABASE_POOL_SIZE=32)',
    string: { default: '' },
  },
  {
    name: 'results',
    description: 'where the result JSON is written',
    string: { default: 'test/bench/results/outbox.json' },
  },
  {
    name: 'backlog',
    description:
      'events committed in one transaction for the backlog phase (the dispatchers alone drain it: their own delivery rate, no writer beside them); 0: skip',
    int: { default: 20_000, min: 0, max: 1_000_000 },
  },
  { name: 'skip-peer', description: 'do not run the graphile-worker comparison', switch: true },
  {
    name: 'skip-stall',
    description: 'do not run the stall phase (a dispatcher SIGKILLed under paced load)',
    switch: true,
  },
  {
    name: 'profile',
    description: 'run the dispatchers with --cpu-prof (profiles in dist/bench-profiles/)',
    switch: true,
  },
  {
    name: 'pg-stats',
    description:
      "run on a scratch PostgreSQL cluster of the bench's own with pg_stat_statements, and report each statement's cost per event",
    switch: true,
  },
  { name: 'help', description: 'print this and exit', switch: true },
];

interface Options {
  writers: number;
  seconds: number;
  aggregates: number;
  rate: number;
  dispatchers: number;
  concurrency: number;
  peerConcurrency: number;
  peerLocalQueue: number;
  peerCompleteBatchMs: number;
  dispatcherEnv: Record<string, string>;
  results: string;
  skipPeer: boolean;
  skipStall: boolean;
  backlog: number;
  profile: boolean;
  pgStats: boolean;
}

interface Settings {
  options: Options;
  service: ServiceConfig;
  adminDatabase: string;
  /** The cluster's CPU (and, with --pg-stats, its statements) per phase. */
  watch?: ClusterWatch;
}

/** A system under test, seen from the writers: one committed event per call. */
interface EventWriter {
  /** Bumps the aggregate's revision and commits its event; returns the revision. */
  write(aggregateId: string): Promise<number>;
  close(): Promise<void>;
}

interface MeasuredPhase extends PhaseResult {
  cpu: CpuUsage;
  /** The whole cluster's CPU per committed event (see postgres-cost.ts). */
  postgresCpuMsPerEvent?: number | null;
  statements?: StatementReport;
  /** PostgreSQL statements the dispatchers ran per delivered event (their own counters). */
  dispatcherStatementsPerEvent?: number;
}

function progress(line: string): void {
  process.stderr.write(`[bench:outbox] ${line}\n`);
}

// ---- databases ---------------------------------------------------------------------------------

function databaseConfig(settings: Settings, database: string, poolSize: number): ServiceConfig {
  return {
    ...settings.service,
    DATABASE_HOST: LOCALHOST,
    DATABASE_NAME: database,
    DATABASE_POOL_SIZE: poolSize,
  };
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

async function recreateDatabase(settings: Settings, name: string): Promise<void> {
  await withAdminClient(settings, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  });
}

async function dropDatabase(settings: Settings, name: string): Promise<void> {
  await withAdminClient(settings, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`),
  ).catch(() => undefined);
}

async function bumpRevision(manager: EntityManager, id: string): Promise<number> {
  const rows = returnedRows<{ revision: string }>(
    await manager.query(
      'UPDATE bench_aggregates SET revision = revision + 1 WHERE id = $1 RETURNING revision',
      [id],
    ),
  );
  const revision = Number(rows[0]?.revision);
  if (!Number.isSafeInteger(revision) || revision < 1)
    throw new Error(`aggregate ${id} is missing`);
  return revision;
}

function ticketPayload(
  aggregateId: string,
  revision: number,
): EventPayloads['ticket.state_changed'] {
  const base = { ticketId: aggregateId, mode: 'duel', enqueuedAt: ENQUEUED_AT };
  if (revision === 1) return { ...base, from: null, to: 'SEARCHING' };
  if (revision % 2 === 0) return { ...base, from: 'SEARCHING', to: 'MATCHED', matchId: MATCH_ID };
  return { ...base, from: 'MATCHED', to: 'SEARCHING', matchId: MATCH_ID, reason: 'MATCH_FAILED' };
}

// ---- the writers -------------------------------------------------------------------------------

/** The event every writer of ours commits: the ticket's next state, validated by the builder. */
function ticketEvent(id: string, revision: number) {
  return buildEnvelope({
    event: 'ticket.state_changed',
    aggregateType: 'ticket',
    aggregateId: id,
    revision,
    occurredAt: new Date(),
    playerIds: [PLAYER_ID],
    payload: ticketPayload(id, revision),
  });
}

/** Our write path: the state change and its validated envelope in one transaction, then the wake-up. */
async function outboxWriter(
  config: ServiceConfig,
  redis: Redis,
): Promise<EventWriter & { dataSource: DataSource; backlog: BacklogWriter }> {
  const dataSource = new DataSource(
    dataSourceOptions(config, { migrations: allMigrations, applicationName: 'mp-bench-writer' }),
  );
  await dataSource.initialize();
  const writer = new OutboxWriter();
  const signal = new OutboxSignal(redis, config);
  return {
    dataSource,
    async write(id) {
      const revision = await runInTransaction(dataSource, async (manager) => {
        const next = await bumpRevision(manager, id);
        await writer.append(manager, [ticketEvent(id, next)]);
        return next;
      });
      signal.committed();
      return revision;
    },
    async backlog(events, aggregates) {
      const committed = await runInTransaction(dataSource, async (manager) => {
        const rows = await manager.query<{ id: string; revision: string }[]>(
          'SELECT id, revision FROM bench_aggregates ORDER BY id',
        );
        const revisions = new Map(rows.map((row) => [row.id, Number(row.revision)]));
        const written: [string, number][] = [];
        for (let start = 0; start < events; start += BACKLOG_CHUNK) {
          const envelopes = [];
          for (let n = start; n < Math.min(events, start + BACKLOG_CHUNK); n += 1) {
            const id = aggregateId(1 + (n % aggregates));
            const next = (revisions.get(id) ?? 0) + 1;
            revisions.set(id, next);
            written.push([id, next]);
            envelopes.push(ticketEvent(id, next));
          }
          await writer.append(manager, envelopes);
        }
        await manager.query(
          `UPDATE bench_aggregates a SET revision = u.revision
             FROM unnest($1::uuid[], $2::bigint[]) AS u(id, revision) WHERE a.id = u.id`,
          [[...revisions.keys()], [...revisions.values()]],
        );
        return written;
      });
      signal.committed();
      return committed;
    },
    close: () => dataSource.destroy(),
  };
}

/** Events committed in one transaction at a time, so they become due all at once. */
type BacklogWriter = (events: number, aggregates: number) => Promise<[string, number][]>;
const BACKLOG_CHUNK = 1_000;

/** The peer's write path: the same state change and a graphile-worker job on the aggregate's queue. */
async function peerWriter(
  config: ServiceConfig,
): Promise<EventWriter & { dataSource: DataSource }> {
  const dataSource = new DataSource(
    dataSourceOptions(config, { applicationName: 'mp-bench-peer-writer' }),
  );
  await dataSource.initialize();
  return {
    dataSource,
    write: (id) =>
      runInTransaction(dataSource, async (manager) => {
        const revision = await bumpRevision(manager, id);
        const payload: PeerJobPayload = {
          event: 'ticket.state_changed',
          aggregateType: 'ticket',
          aggregateId: id,
          revision,
          state: ticketPayload(id, revision).to,
          occurredAt: new Date().toISOString(),
          playerIds: [PLAYER_ID],
        };
        await manager.query(
          'SELECT graphile_worker.add_job($1, $2::json, queue_name := $3, max_attempts := 10)',
          [PEER_TASK, JSON.stringify(payload), `agg-${id}`],
        );
        return revision;
      }),
    close: () => dataSource.destroy(),
  };
}

// ---- phases ------------------------------------------------------------------------------------

function randomAggregate(count: number): string {
  return aggregateId(1 + Math.floor(Math.random() * count));
}

async function writeOnce(
  writer: EventWriter,
  phase: PhaseRecording,
  aggregates: number,
): Promise<void> {
  const id = randomAggregate(aggregates);
  try {
    phase.committed(id, await writer.write(id));
  } catch (error) {
    phase.failedTransactions += 1;
    if (phase.failedTransactions > MAX_FAILED_TRANSACTIONS) {
      throw new Error(
        `more than ${MAX_FAILED_TRANSACTIONS} transactions failed; last: ${(error as Error).message}`,
      );
    }
  }
}

/** Closed loop: each writer commits back to back until the deadline. */
async function flatOut(
  writer: EventWriter,
  phase: PhaseRecording,
  options: Options,
  seconds: number,
): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: options.writers }, async () => {
      for (let n = 0; n < MAX_TRANSACTIONS_PER_WRITER && performance.now() < deadline; n += 1) {
        await writeOnce(writer, phase, options.aggregates);
      }
    }),
  );
}

/**
 * Open loop at `rate` events/s in total: writer w starts its k-th transaction at
 * (k * writers + w) / rate seconds, or at once if it is behind; nothing starts after the
 * deadline, so a system that cannot keep up commits fewer events rather than running longer.
 */
async function paced(writer: EventWriter, phase: PhaseRecording, options: Options): Promise<void> {
  const start = performance.now();
  const deadline = start + options.seconds * 1000;
  const gapMs = 1000 / options.rate;
  await Promise.all(
    Array.from({ length: options.writers }, async (_, w) => {
      for (let k = 0; k < MAX_TRANSACTIONS_PER_WRITER; k += 1) {
        const due = start + (k * options.writers + w) * gapMs;
        if (due >= deadline || performance.now() >= deadline) return;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        await writeOnce(writer, phase, options.aggregates);
      }
    }),
  );
}

/** The processes under test and the database whose backends count as theirs. */
interface Observed {
  pids: readonly number[];
  database: string;
  /** Statements the system under test has run so far, if it counts them. */
  statements?: () => Promise<number>;
  /** PostgreSQL's cost of the phase, if the bench watches the cluster. */
  cost?: ClusterWatch;
}

async function measure(
  recorder: DeliveryRecorder,
  observed: Observed,
  seconds: number,
  load: (phase: PhaseRecording) => Promise<void>,
): Promise<MeasuredPhase> {
  const { pids, database } = observed;
  const statementsBefore = await observed.statements?.();
  const costBefore = await observed.cost?.begin();
  const phase = recorder.begin();
  const before = sampleCpu(pids, [database]);
  await load(phase);
  const drained = await recorder.drain(phase, {
    timeoutMs: 60_000 + seconds * 10_000,
    stallMs: 15_000,
  });
  const after = sampleCpu(pids, [database]);
  const measured = phase.result(drained);
  const result: MeasuredPhase = {
    ...measured,
    cpu: cpuUsage(pids, before, after),
    ...(costBefore === undefined ? {} : await observed.cost!.end(costBefore, measured.committed)),
  };
  const statementsAfter = await observed.statements?.();
  if (statementsBefore === undefined || statementsAfter === undefined || result.delivered === 0)
    return result;
  return {
    ...result,
    dispatcherStatementsPerEvent:
      Math.round(((statementsAfter - statementsBefore) / result.delivered) * 1000) / 1000,
  };
}

/** Health/metrics port of each dispatcher the bench started. */
const dispatcherPorts = new WeakMap<BenchChild, number>();

/** Claim and settle statements the dispatchers have run, from their /metrics. */
async function dispatcherStatements(dispatchers: readonly BenchChild[]): Promise<number> {
  let total = 0;
  for (const child of dispatchers) {
    const port = dispatcherPorts.get(child);
    if (port === undefined || !child.alive()) continue;
    const metrics = await fetch(`http://${LOCALHOST}:${port}/metrics`, {
      signal: AbortSignal.timeout(5_000),
    }).then((response) => response.text());
    for (const match of metrics.matchAll(
      /^outbox_(?:relay_claim|settle)_statements_total(?:\{[^}]*\})? (\d+)/gm,
    )) {
      total += Number(match[1]);
    }
  }
  return total;
}

function describeCpu(cpu: CpuUsage): string {
  // pgbench's backends exit before the second sample, so only the machine total is meaningful.
  return `machine cpu ${cpu.machine}% of one core`;
}

function describePhase(name: string, result: MeasuredPhase, processes: string): string {
  const { p50, p95, p99, max } = result.latencyMs;
  const faults = [
    result.drained ? '' : ` NOT DRAINED (${result.committed - result.delivered} missing)`,
    result.orderViolations > 0 ? ` ORDER VIOLATIONS ${result.orderViolations}` : '',
    result.failedTransactions > 0 ? ` failed transactions ${result.failedTransactions}` : '',
    result.duplicates > 0 ? ` duplicates ${result.duplicates}` : '',
  ].join('');
  const cpu = result.cpu;
  return (
    `${name}: committed ${result.committed} (${result.committedPerS}/s), delivered ${result.delivered} ` +
    `(${result.deliveredPerS}/s over ${result.deliverySeconds} s, drain ${result.drainSeconds} s), ` +
    `commit->delivery p50 ${p50} p95 ${p95} p99 ${p99} max ${max} ms; cpu % of one core: ${processes} ${cpu.pids}, ` +
    `postgres ${cpu.postgres}, redis ${cpu.redis}, bench ${cpu.bench}, other ${cpu.other}, machine ${cpu.machine}` +
    `${result.dispatcherStatementsPerEvent === undefined ? '' : `; dispatcher statements/event ${result.dispatcherStatementsPerEvent}`}${faults}`
  );
}

// ---- pgbench ceiling ---------------------------------------------------------------------------

/** pgbench against the bench's database; the outbox is emptied after it. */
async function pgbench(
  settings: Settings,
  script: string,
  dataSource: DataSource,
): Promise<Ceiling> {
  const { options, service } = settings;
  try {
    return await runPgbench(
      {
        host: LOCALHOST,
        port: service.DATABASE_PORT,
        user: service.DATABASE_USER,
        password: service.DATABASE_PASSWORD,
        database: OUTBOX_DATABASE,
      },
      script,
      {
        clients: options.writers,
        seconds: options.seconds,
        aggregates: options.aggregates,
        watch: settings.watch,
      },
    );
  } finally {
    await clearOutbox(dataSource);
  }
}

// ---- the processes under test ------------------------------------------------------------------

function baseEnv(settings: Settings, database: string, prefix: string): Record<string, string> {
  const { service } = settings;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATABASE_HOST: LOCALHOST,
    DATABASE_PORT: String(service.DATABASE_PORT),
    DATABASE_USER: service.DATABASE_USER,
    DATABASE_NAME: database,
    REDIS_HOST: LOCALHOST,
    REDIS_PORT: String(service.REDIS_PORT),
    REDIS_KEY_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    ...(service.DATABASE_PASSWORD ? { DATABASE_PASSWORD: service.DATABASE_PASSWORD } : {}),
    ...(service.REDIS_PASSWORD ? { REDIS_PASSWORD: service.REDIS_PASSWORD } : {}),
  };
}

/** Dispatcher `index` (1-based in its name), once its health check answers. */
async function startDispatcher(settings: Settings, index: number): Promise<BenchChild> {
  const { options } = settings;
  const profileDir = path.join(REPO_ROOT, 'dist/bench-profiles');
  if (options.profile) mkdirSync(profileDir, { recursive: true });
  const port = await freePort();
  const child = startNodeChild(
    `dispatcher-${index + 1}`,
    'dist/test/dispatcher-sink/sink-dispatcher.main.js',
    [],
    {
      ...baseEnv(settings, OUTBOX_DATABASE, OUTBOX_PREFIX),
      HEALTH_HOST: LOCALHOST,
      HEALTH_PORT: String(port),
      DISPATCHER_CONCURRENCY: String(options.concurrency),
      ...options.dispatcherEnv,
    },
    options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  dispatcherPorts.set(child, port);
  await waitUntil(async () => {
    if (!child.alive()) throw new Error(`${child.name} exited:\n${child.output()}`);
    const response = await fetch(`http://${LOCALHOST}:${port}/health`, {
      signal: AbortSignal.timeout(2_000),
    });
    return response.status === 200;
  }, `${child.name} to be healthy`).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  return child;
}

async function startDispatchers(settings: Settings): Promise<BenchChild[]> {
  const dispatchers: BenchChild[] = [];
  for (let i = 0; i < settings.options.dispatchers; i += 1) {
    dispatchers.push(await startDispatcher(settings, i));
  }
  return dispatchers;
}

/** graphile-worker's batched fetch; -1 is off. */
function peerLocalQueue(options: Options): number {
  return options.peerLocalQueue > 1 ? options.peerLocalQueue : -1;
}

function peerConcurrency(options: Options): number {
  return options.peerConcurrency > 0 ? options.peerConcurrency : options.concurrency;
}

async function startPeers(settings: Settings): Promise<BenchChild[]> {
  const { options } = settings;
  const workerOptions: PeerWorkerOptions = {
    channel: notificationPattern(PEER_PREFIX),
    concurrency: peerConcurrency(options),
    // Jobs arrive by LISTEN/NOTIFY (add_job notifies); polling is only the backstop, as ours.
    pollIntervalMs: 250,
    localQueueSize: peerLocalQueue(options),
    completeJobBatchDelayMs: options.peerCompleteBatchMs > 0 ? options.peerCompleteBatchMs : -1,
  };
  const peers: BenchChild[] = [];
  for (let i = 0; i < options.dispatchers; i += 1) {
    const child = startNodeChild(
      `graphile-peer-${i + 1}`,
      'dist/test/bench/graphile-peer.worker.js',
      [JSON.stringify(workerOptions)],
      baseEnv(settings, PEER_DATABASE, PEER_PREFIX),
    );
    peers.push(child);
    await waitUntil(() => {
      if (!child.alive()) throw new Error(`${child.name} exited:\n${child.output()}`);
      return child.output().includes(PEER_READY_LINE);
    }, `${child.name} to be ready`);
  }
  return peers;
}

/** Nest logs its boot at "log" level whatever LOG_LEVEL says; pass on only what a run should show. */
function reportWarnings(child: BenchChild): void {
  const lines = child
    .output()
    .split('\n')
    .filter(
      (line) =>
        line.trim() !== '' &&
        line !== PEER_READY_LINE &&
        !/^\{"level":"(log|info|debug|verbose|trace)"/.test(line),
    );
  if (lines.length > 0) progress(`${child.name} said:\n${lines.slice(-20).join('\n')}`);
}

async function stopAll(children: readonly BenchChild[]): Promise<void> {
  await Promise.all(children.map((child) => child.stop()));
}

async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let round = 0; round < 100_000; round += 1) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}

// ---- the run -----------------------------------------------------------------------------------

interface SystemRun {
  throughput: MeasuredPhase;
  latency: MeasuredPhase;
}

/** Warm-up, then the flat-out throughput phase, then the paced latency phase, each drained. */
async function runSystem(
  name: string,
  settings: Settings,
  writer: EventWriter,
  recorder: DeliveryRecorder,
  observed: Observed,
  between: () => Promise<void>,
  processes: string,
): Promise<SystemRun> {
  const { options } = settings;
  progress(`${name} warm-up (${WARM_UP_SECONDS} s flat out)`);
  await measure(recorder, observed, WARM_UP_SECONDS, (phase) =>
    flatOut(writer, phase, options, WARM_UP_SECONDS),
  );
  await between();
  progress(`${name} throughput: ${options.writers} writers flat out for ${options.seconds} s`);
  const throughput = await measure(recorder, observed, options.seconds, (phase) =>
    flatOut(writer, phase, options, options.seconds),
  );
  progress(describePhase(`${name} throughput`, throughput, processes));
  await between();
  progress(`${name} latency: ${options.rate} events/s for ${options.seconds} s`);
  const latency = await measure(recorder, observed, options.seconds, (phase) =>
    paced(writer, phase, options),
  );
  progress(describePhase(`${name} latency`, latency, processes));
  return { throughput, latency };
}

// ---- the stall phase ---------------------------------------------------------------------------

/** Events committed from this long before the kill... */
const STALL_WINDOW_BEFORE_MS = 1_000;
/** ...to this long after it make up the fault window. */
const STALL_WINDOW_AFTER_MS = 3_000;
/** The kill comes this far into the phase. */
const STALL_KILL_AT = 1 / 3;

interface StallRun {
  phase: MeasuredPhase;
  dispatchers: number;
  /** Rows the killed dispatcher had claimed and not settled when it was killed. */
  claimsAtKill: number;
  /** From the kill until the restarted dispatcher answered its health check. */
  restartMs: number;
  /** Commit to delivery of the events committed in the fault window. */
  window: Percentiles & { events: number; undelivered: number };
  /** The same for every other event of the phase: the normal latency beside it. */
  outside: Percentiles & { events: number };
}

/** Commit-to-delivery of the phase's events committed within [from, to) or outside it. */
function latenciesOf(
  phase: PhaseRecording,
  from: number,
  to: number,
): { inside: number[]; outside: number[]; undelivered: number } {
  const inside: number[] = [];
  const outside: number[] = [];
  let undelivered = 0;
  for (const [key, committedAt] of phase.commits) {
    const within = committedAt >= from && committedAt < to;
    const arrivedAt = phase.arrivals.get(key);
    if (arrivedAt === undefined) {
      if (within) undelivered += 1;
      continue;
    }
    (within ? inside : outside).push(Math.max(0, arrivedAt - committedAt));
  }
  return { inside, outside, undelivered };
}

/**
 * Paced load on at least two dispatchers; a third of the way in, one is killed with SIGKILL and
 * started again at once. The rows it had claimed wait until another dispatcher takes its claims
 * over (its heartbeat silent for OUTBOX_OWNER_TIMEOUT_MS), and so do later events of the same
 * aggregates: the fault window's commit-to-delivery shows that stall. `dispatchers` is updated
 * in place (the victim replaced by its restart, a standby added if there was only one).
 */
async function stallPhase(
  settings: Settings,
  writer: EventWriter,
  dataSource: DataSource,
  recorder: DeliveryRecorder,
  dispatchers: BenchChild[],
  between: () => Promise<void>,
): Promise<StallRun> {
  const { options } = settings;
  while (dispatchers.length < 2)
    dispatchers.push(await startDispatcher(settings, dispatchers.length));
  await between();
  progress(
    `outbox stall: ${options.rate} events/s for ${options.seconds} s on ${dispatchers.length} dispatchers, ` +
      `one SIGKILLed after ${Math.round(options.seconds * STALL_KILL_AT * 10) / 10} s and restarted`,
  );
  const victim = dispatchers[0]!;
  let killedAt = 0;
  let restartMs = 0;
  let claimsAtKill = 0;
  const claimsHeldBy = async (child: BenchChild) => {
    const [row] = await dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM outbox o JOIN outbox_dispatchers d ON d.id = o.claimed_by
        WHERE o.status = 'pending' AND d.label LIKE '%:' || $1::text`,
      [String(child.pid)],
    );
    return row?.count ?? 0;
  };
  let recorded: PhaseRecording | undefined;
  const phase = await measure(
    recorder,
    // CPU of the dispatchers that live through the phase (a dead process has no counters left).
    { pids: dispatchers.slice(1).map((child) => child.pid), database: OUTBOX_DATABASE },
    options.seconds,
    async (recording) => {
      recorded = recording;
      const load = paced(writer, recording, options);
      await sleep(options.seconds * 1000 * STALL_KILL_AT);
      // The moment it holds claims (within a second), or else anyway: that is the stall measured.
      const holding = performance.now() + 1_000;
      while (performance.now() < holding && (claimsAtKill = await claimsHeldBy(victim)) === 0)
        await sleep(1);
      killedAt = performance.now();
      victim.child.kill('SIGKILL');
      await victim.exited;
      dispatchers[0] = await startDispatcher(settings, 0);
      restartMs = Math.round(performance.now() - killedAt);
      await load;
    },
  );
  const { inside, outside, undelivered } = latenciesOf(
    recorded!,
    killedAt - STALL_WINDOW_BEFORE_MS,
    killedAt + STALL_WINDOW_AFTER_MS,
  );
  const run: StallRun = {
    phase,
    dispatchers: dispatchers.length,
    claimsAtKill,
    restartMs,
    window: { ...percentiles(inside), events: inside.length + undelivered, undelivered },
    outside: { ...percentiles(outside), events: outside.length },
  };
  progress(describePhase('outbox stall (whole phase)', phase, 'surviving dispatchers'));
  progress(
    `outbox stall: ${run.window.events} events committed from ${STALL_WINDOW_BEFORE_MS} ms before to ${STALL_WINDOW_AFTER_MS} ms after the kill: ` +
      `commit->delivery p50 ${run.window.p50} p99 ${run.window.p99} max ${run.window.max} ms` +
      `${undelivered > 0 ? `, ${undelivered} NOT DELIVERED` : ''}; the rest: p99 ${run.outside.p99} max ${run.outside.max} ms; ` +
      `${claimsAtKill} claim(s) held by the killed dispatcher; restarted one healthy after ${restartMs} ms`,
  );
  return run;
}

function ms({ p50, p95, p99 }: Percentiles): { p50: number; p95: number; p99: number } {
  return { p50, p95, p99 };
}

function envPairs(text: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const pair of text.split(',').filter((item) => item !== '')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/s.exec(pair);
    if (!match?.[1])
      throw new UsageError(`--dispatcher-env: ${JSON.stringify(pair)} is not KEY=VALUE`);
    pairs[match[1]] = match[2] ?? '';
  }
  return pairs;
}

function optionsFrom(argv: readonly string[]): Options {
  const command = 'npm run bench:outbox --';
  const summary =
    'Outbox delivery benchmark (see docs/BENCHMARKS.md). Needs PostgreSQL and Redis on 127.0.0.1 and a build.';
  try {
    const flags = parseFlags(argv, FLAGS);
    if (flags.help === true) {
      process.stdout.write(usage(command, summary, FLAGS));
      process.exit(0);
    }
    return {
      writers: flags.writers as number,
      seconds: flags.seconds as number,
      aggregates: flags.aggregates as number,
      rate: flags.rate as number,
      dispatchers: flags.dispatchers as number,
      concurrency: flags.concurrency as number,
      peerConcurrency: flags['peer-concurrency'] as number,
      peerLocalQueue: flags['peer-local-queue'] as number,
      peerCompleteBatchMs: flags['peer-complete-batch-ms'] as number,
      dispatcherEnv: envPairs(flags['dispatcher-env'] as string),
      results: flags.results as string,
      skipPeer: flags['skip-peer'] === true,
      skipStall: flags['skip-stall'] === true,
      backlog: flags.backlog as number,
      profile: flags.profile === true,
      pgStats: flags['pg-stats'] === true,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench:outbox: ${error.message}\n\n${usage(command, summary, FLAGS)}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2));
  const migrate = loadConfig(MigrateConfig);
  const closers: (() => Promise<unknown>)[] = [];
  const cleanUp = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    closers.length = 0;
  };
  installCleanup(cleanUp);
  const settings: Settings = {
    options,
    service: { ...loadConfig(ServiceConfig), DATABASE_HOST: LOCALHOST, REDIS_HOST: LOCALHOST },
    adminDatabase: migrate.DATABASE_ADMIN_NAME,
  };
  if (options.pgStats) {
    progress('--pg-stats: starting a scratch PostgreSQL cluster with pg_stat_statements');
    const scratch = await startScratchCluster();
    closers.push(() => scratch.destroy());
    settings.service = {
      ...settings.service,
      DATABASE_PORT: scratch.port,
      DATABASE_USER: scratch.user,
      DATABASE_PASSWORD: undefined,
    };
    settings.adminDatabase = scratch.adminDatabase;
  }
  const { service } = settings;
  const redisOptions = {
    host: LOCALHOST,
    port: service.REDIS_PORT,
    password: service.REDIS_PASSWORD,
  };
  const redis = new Redis(redisOptions);
  closers.push(() => redis.quit());
  closers.push(() => deleteRedisPrefix(redis, OUTBOX_PREFIX));
  closers.push(() => deleteRedisPrefix(redis, PEER_PREFIX));

  try {
    progress(
      `setup: database ${OUTBOX_DATABASE}, redis prefix ${OUTBOX_PREFIX}, ${options.aggregates} aggregates, ` +
        `${options.writers} writers, ${options.dispatchers} dispatcher(s) at concurrency ${options.concurrency}`,
    );
    await deleteRedisPrefix(redis, OUTBOX_PREFIX);
    await deleteRedisPrefix(redis, PEER_PREFIX);
    await recreateDatabase(settings, OUTBOX_DATABASE);
    closers.push(() => dropDatabase(settings, OUTBOX_DATABASE));
    const outboxConfig = databaseConfig(settings, OUTBOX_DATABASE, options.writers + 2);
    const ours = await outboxWriter({ ...outboxConfig, REDIS_KEY_PREFIX: OUTBOX_PREFIX }, redis);
    closers.push(() => ours.close());
    await new Migrator(ours.dataSource).up();
    await createBenchAggregates(ours.dataSource, options.aggregates);
    const watch = await ClusterWatch.open(
      {
        host: LOCALHOST,
        port: service.DATABASE_PORT,
        user: service.DATABASE_USER,
        password: service.DATABASE_PASSWORD,
        database: settings.adminDatabase,
      },
      OUTBOX_DATABASE,
      options.pgStats,
    );
    closers.push(() => watch.close());
    settings.watch = watch;

    progress(
      `ceiling: pgbench, ${options.writers} clients for ${options.seconds} s, one statement`,
    );
    const scripts = pgbenchScripts({
      playerId: PLAYER_ID,
      matchId: MATCH_ID,
      enqueuedAt: ENQUEUED_AT,
    });
    const ceiling = await pgbench(settings, scripts.oneStatement, ours.dataSource);
    progress(
      `ceiling: ${ceiling.tps} tps (${describeCpu(ceiling.cpu)}); now BEGIN/UPDATE/INSERT/COMMIT like the writers`,
    );
    const ceilingTwoStatements = await pgbench(settings, scripts.writersShape, ours.dataSource);
    progress(
      `ceiling (writers' shape): ${ceilingTwoStatements.tps} tps (${describeCpu(ceilingTwoStatements.cpu)}, ` +
        `postgres ${ceilingTwoStatements.postgresCpuMsPerTx} ms cpu per transaction)`,
    );
    if (ceilingTwoStatements.statements)
      progress(
        `pgbench (writers' shape) statements:\n${statementTable(ceilingTwoStatements.statements)}`,
      );
    const ceilingTps = ceiling.tps;
    const writersShapeTps = ceilingTwoStatements.tps;
    if (options.rate === 0) options.rate = Math.max(1, Math.round(0.3 * writersShapeTps));

    const subscriber = new Redis(redisOptions);
    const recorder = await DeliveryRecorder.subscribe(
      subscriber,
      deliverySinkPattern(OUTBOX_PREFIX),
    );
    closers.push(() => recorder.close());
    progress(
      `starting ${options.dispatchers} dispatcher(s)${options.profile ? ' with --cpu-prof' : ''}`,
    );
    const dispatchers = await startDispatchers(settings);
    closers.push(() => stopAll(dispatchers));
    const outbox = await runSystem(
      'outbox',
      settings,
      ours,
      recorder,
      {
        pids: dispatchers.map((child) => child.pid),
        database: OUTBOX_DATABASE,
        statements: () => dispatcherStatements(dispatchers),
        cost: watch,
      },
      () => clearOutbox(ours.dataSource),
      'dispatchers',
    );
    for (const [name, phase] of [
      ['throughput', outbox.throughput],
      ['latency', outbox.latency],
    ] as const) {
      if (phase.statements)
        progress(`outbox ${name} statements:\n${statementTable(phase.statements)}`);
    }
    let backlog: MeasuredPhase | undefined;
    if (options.backlog > 0) {
      await clearOutbox(ours.dataSource);
      progress(
        `outbox backlog: ${options.backlog} events committed at once, drained by the dispatchers alone`,
      );
      backlog = await measure(
        recorder,
        {
          pids: dispatchers.map((child) => child.pid),
          database: OUTBOX_DATABASE,
          statements: () => dispatcherStatements(dispatchers),
          cost: watch,
        },
        options.seconds,
        async (phase) => {
          for (const [id, revision] of await ours.backlog(options.backlog, options.aggregates)) {
            phase.committed(id, revision);
          }
        },
      );
      progress(describePhase('outbox backlog', backlog, 'dispatchers'));
      await clearOutbox(ours.dataSource);
    }
    const stall = options.skipStall
      ? undefined
      : await stallPhase(settings, ours, ours.dataSource, recorder, dispatchers, () =>
          clearOutbox(ours.dataSource),
        );
    await stopAll(dispatchers);
    for (const child of dispatchers) reportWarnings(child);

    let peer: SystemRun | undefined;
    if (!options.skipPeer) {
      progress(`peer: graphile-worker in database ${PEER_DATABASE}, one queue per aggregate`);
      await recreateDatabase(settings, PEER_DATABASE);
      closers.push(() => dropDatabase(settings, PEER_DATABASE));
      const peerConfig = databaseConfig(settings, PEER_DATABASE, options.writers + 2);
      const theirs = await peerWriter(peerConfig);
      closers.push(() => theirs.close());
      await createBenchAggregates(theirs.dataSource, options.aggregates);
      const migrationPool = new Pool({
        host: LOCALHOST,
        port: service.DATABASE_PORT,
        user: service.DATABASE_USER,
        password: service.DATABASE_PASSWORD,
        database: PEER_DATABASE,
        max: 2,
      });
      await runMigrations({ pgPool: migrationPool }).finally(() => migrationPool.end());
      const peerSubscriber = new Redis(redisOptions);
      const peerRecorder = await DeliveryRecorder.subscribe(
        peerSubscriber,
        notificationPattern(PEER_PREFIX),
      );
      closers.push(() => peerRecorder.close());
      const peers = await startPeers(settings);
      closers.push(() => stopAll(peers));
      peer = await runSystem(
        'peer',
        settings,
        theirs,
        peerRecorder,
        { pids: peers.map((child) => child.pid), database: PEER_DATABASE },
        () => theirs.dataSource.query('VACUUM ANALYZE bench_aggregates'),
        'graphile-worker',
      );
      await stopAll(peers);
      for (const child of peers) reportWarnings(child);
    }

    const delivered = outbox.throughput.deliveredPerS;
    const p99 = outbox.latency.latencyMs.p99;
    const peerDelivered = peer?.throughput.deliveredPerS;
    const phases = [
      outbox.throughput,
      outbox.latency,
      ...(backlog ? [backlog] : []),
      ...(stall ? [stall.phase] : []),
    ];
    const backlogDelivered = backlog?.deliveredPerS;
    const result = {
      committed_per_s: outbox.throughput.committedPerS,
      delivered_per_s: delivered,
      commit_to_delivery_ms: ms(outbox.latency.latencyMs),
      dispatcher_cpu_pct: outbox.throughput.cpu.pids,
      ceiling_tps: ceilingTps,
      writers_shape_ceiling_tps: writersShapeTps,
      // The whole cluster's CPU per committed event (dispatchers' claims and settles included),
      // beside pgbench's per transaction of the writers' shape.
      postgres_cpu_ms_per_event: outbox.throughput.postgresCpuMsPerEvent ?? null,
      pgbench_postgres_cpu_ms_per_tx: ceilingTwoStatements.postgresCpuMsPerTx,
      peer_delivered_per_s: peer?.throughput.deliveredPerS ?? null,
      notification_stall_ms: stall ? { p99: stall.window.p99, max: stall.window.max } : null,
      // The dispatchers' own rate: a backlog committed at once, no writer competing for the CPU.
      backlog_delivered_per_s: backlogDelivered ?? null,
      writers: options.writers,
      seconds: options.seconds,
      dispatchers: options.dispatchers,
      rate: options.rate,
      node: process.version,
      timestamp: new Date().toISOString(),
      targets: {
        delivered_at_least_0_6_of_writers_shape: delivered >= 0.6 * writersShapeTps,
        p99_at_most_25_ms_at_0_3_of_writers_shape:
          p99 <= 25 && options.rate >= Math.round(0.3 * writersShapeTps),
        delivered_at_least_0_6_of_ceiling: delivered >= 0.6 * ceilingTps,
        delivered_above_peer: peer ? delivered > peer.throughput.deliveredPerS : null,
        p99_at_most_25_ms: p99 <= 25,
        delivered_at_least_0_3_of_ceiling: delivered >= 0.3 * ceilingTps,
        delivered_at_least_5x_peer:
          peerDelivered !== undefined ? delivered >= 5 * peerDelivered : null,
        backlog_delivered_at_least_0_3_of_ceiling:
          backlogDelivered !== undefined ? backlogDelivered >= 0.3 * ceilingTps : null,
        backlog_delivered_at_least_5x_peer:
          backlogDelivered !== undefined && peerDelivered !== undefined
            ? backlogDelivered >= 5 * peerDelivered
            : null,
        stall_max_at_most_2_s: stall
          ? stall.window.max <= 2_000 && stall.window.undelivered === 0
          : null,
        no_order_violations_or_losses: phases.every(
          (phase) => phase.drained && phase.orderViolations === 0,
        ),
      },
      details: {
        aggregates: options.aggregates,
        concurrency: options.concurrency,
        dispatcher_env: options.dispatcherEnv,
        ceiling_tps_writers_shape: ceilingTwoStatements.tps,
        ceiling_machine_cpu_pct: ceiling.cpu.machine,
        statements: options.pgStats
          ? {
              pgbench_writers_shape: ceilingTwoStatements.statements ?? null,
              outbox_throughput: outbox.throughput.statements ?? null,
              outbox_latency: outbox.latency.statements ?? null,
              backlog: backlog?.statements ?? null,
            }
          : null,
        throughput: phaseDetails(outbox.throughput),
        latency: phaseDetails(outbox.latency),
        backlog: backlog ? { events: options.backlog, ...phaseDetails(backlog) } : null,
        stall: stall
          ? {
              dispatchers: stall.dispatchers,
              window_ms: { before_kill: STALL_WINDOW_BEFORE_MS, after_kill: STALL_WINDOW_AFTER_MS },
              window: stall.window,
              outside_window: stall.outside,
              claims_held_at_kill: stall.claimsAtKill,
              restart_ms: stall.restartMs,
              phase: phaseDetails(stall.phase),
            }
          : null,
        peer: peer
          ? {
              concurrency: peerConcurrency(options),
              local_queue_size: peerLocalQueue(options),
              complete_job_batch_delay_ms:
                options.peerCompleteBatchMs > 0 ? options.peerCompleteBatchMs : -1,
              throughput: phaseDetails(peer.throughput),
              latency: phaseDetails(peer.latency),
            }
          : null,
      },
    };
    const resultsFile = path.resolve(REPO_ROOT, options.results);
    mkdirSync(path.dirname(resultsFile), { recursive: true });
    writeFileSync(resultsFile, `${JSON.stringify(result, null, 2)}\n`);
    progress(`results written to ${path.relative(REPO_ROOT, resultsFile)}`);
    await cleanUp();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    if (!isStopping()) await cleanUp();
    throw error;
  }
}

function phaseDetails(phase: MeasuredPhase) {
  return {
    committed: phase.committed,
    delivered: phase.delivered,
    committed_per_s: phase.committedPerS,
    delivered_per_s: phase.deliveredPerS,
    drain_s: phase.drainSeconds,
    drained: phase.drained,
    commit_to_delivery_ms: phase.latencyMs,
    order_violations: phase.orderViolations,
    duplicates: phase.duplicates,
    strays: phase.strays,
    failed_transactions: phase.failedTransactions,
    cpu_pct: phase.cpu,
    postgres_cpu_ms_per_event: phase.postgresCpuMsPerEvent ?? null,
    ...(phase.dispatcherStatementsPerEvent === undefined
      ? {}
      : { dispatcher_statements_per_event: phase.dispatcherStatementsPerEvent }),
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    // After Ctrl-C the signal handler cleans up and exits 130; what failed meanwhile is its doing.
    if (isStopping()) return;
    process.stderr.write(
      `bench:outbox failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
