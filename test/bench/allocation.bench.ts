/**
 * Allocation benchmark: committed matches (as the matcher commits them) through the real
 * dispatcher, allocator and API processes to ASSIGNMENT_READY. With the static provider each
 * pooled "server" is a hand-off endpoint in this process that registers the moment it is handed
 * its credential; with the local provider the allocator launches the reference game server, which
 * fetches and verifies its roster before registering. Matches are formed in several regions and
 * servers configured per region, with room in every region for all of its matches, so every
 * allocation should land in its match's region (`wrong_region_allocations`, target 0). Prints one
 * JSON line last.
 * `npm run bench:allocation -- --help`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig, matcherShardPlan, ServiceConfig } from '@matchplane/config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import {
  SERVER_PROTOCOL_VERSION,
  ServerRoutes,
  type BackfillResponse,
  type RosterResponse,
  type ServerHandOff,
} from '@matchplane/contracts';
import { JoinTokenVerifier, KeySet } from '@matchplane/join-auth';
import { PlayerClient } from '@matchplane/sdk';
import { MatchStore } from '@matchplane/matches';
import { allMigrations } from '@matchplane/migrations';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import {
  dataSourceOptions,
  Migrator,
  quoteIdentifier,
  runInTransaction,
} from '@matchplane/persistence';
import { PlayerStore } from '@matchplane/players';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { writersShapeCeiling, type Ceiling } from './pgbench-ceiling';
import { parseFlags, usage, UsageError, writeResults, type FlagSpec } from './bench.cli';
import {
  freePort,
  installCleanup,
  REPO_ROOT,
  sampleCpu,
  sleep,
  startNodeChild,
  waitUntil,
  type BenchChild,
  type CpuSample,
} from './bench.processes';
import { percentiles, type Percentiles } from './delivery.recorder';
import { ClusterWatch, startScratchCluster, statementTable } from './postgres-cost';

// BENCH_TAG keeps concurrent runs (e.g. an old and a new build side by side) apart.
const TAG = /^[a-z0-9_]{0,20}$/.test(process.env.BENCH_TAG ?? '')
  ? (process.env.BENCH_TAG ?? '')
  : '';
const DATABASE = `mp_bench_allocation${TAG ? `_${TAG}` : ''}`;
const PREFIX = `mp_bench_alloc${TAG ? `_${TAG}` : ''}`;
const LOCALHOST = '127.0.0.1';
/** Matches are formed round-robin over these regions (each in the default PROBE_REGIONS). */
const REGIONS = ['eu-west', 'us-east', 'ap-southeast'] as const;
/** The matcher's default MATCHER_COMMIT_BATCH: matches per transaction when a pass commits many. */
const MATCHER_COMMIT_BATCH = new MatcherConfig().MATCHER_COMMIT_BATCH;

function regionOfMatch(index: number): string {
  return REGIONS[index % REGIONS.length]!;
}

/** A player matched in `region`: near it (20 ms), farther from every other region (60 ms). */
function predictedRttFor(region: string): Record<string, number> {
  return Object.fromEntries(REGIONS.map((r) => [r, r === region ? 20 : 60]));
}

/**
 * The static pool per region (STATIC_SERVERS_BY_REGION): each region room for every match formed
 * there, so no allocation ever needs to leave its region.
 */
function poolByRegion(matches: number, host: string, port: number): string {
  // One spare: the burst and paced phases each start their round-robin at the first region.
  const perRegion = Math.ceil(matches / REGIONS.length) + 1;
  return REGIONS.map(
    (region) =>
      `${region}=${Array.from(
        { length: perRegion },
        (_, i) => `bench-gs-${region}-${i}=${host}:${port}`,
      ).join(',')}`,
  ).join(';');
}

const FLAGS: FlagSpec[] = [
  {
    name: 'burst',
    description: 'Static provider: matches committed at once (throughput)',
    int: { min: 1, max: 5_000, default: 300 },
  },
  {
    name: 'paced',
    description: 'Static provider: matches committed at --rate (latency)',
    int: { min: 0, max: 5_000, default: 200 },
  },
  {
    name: 'rate',
    description: 'Matches per second of the paced phases',
    int: { min: 1, max: 1_000, default: 10 },
  },
  {
    name: 'local',
    description: 'Local provider: matches, each on a launched game server',
    int: { min: 0, max: 200, default: 20 },
  },
  {
    name: 'local-rate',
    description: 'Matches per second of the local phase',
    int: { min: 1, max: 100, default: 1 },
  },
  {
    name: 'backfill',
    description:
      'Static provider: backfills, one at a time, each of a no-show in a running 2x2 match (0: none)',
    int: { min: 0, max: 1_000, default: 40 },
  },
  { name: 'allocators', description: 'Allocator processes', int: { min: 1, max: 8, default: 1 } },
  {
    name: 'allocator-concurrency',
    description: "Jobs each allocator works on at once (0: the allocator's default)",
    int: { min: 0, max: 1_000, default: 0 },
  },
  {
    name: 'pg-stats',
    description:
      "Run on a scratch PostgreSQL cluster of the bench's own with pg_stat_statements, and report each statement's cost per match of the burst",
    switch: true,
  },
  {
    name: 'results',
    description: 'File the figures are written to',
    string: { default: 'test/bench/results/allocation.json' },
  },
  { name: 'help', description: 'Print this and exit', switch: true },
];

function progress(line: string): void {
  process.stderr.write(`[bench:allocation] ${line}\n`);
}

interface PhaseFigures {
  matches: number;
  seconds: number;
  allocationsPerSecond: number;
  matchedToAssignmentReadyMs: Percentiles;
  matchedToHandOffMs: Percentiles;
  handOffToAssignmentReadyMs: Percentiles;
  /** Allocations in a region other than their match's (capacity exists in every region: target 0). */
  wrongRegionAllocations: number;
  /** The dispatcher's part: commit to the allocation job being queued. */
  matchedToJobQueuedMs?: Percentiles;
  /** Waiting for an allocator worker slot. */
  jobQueuedToStartMs?: Percentiles;
  /** The allocator's own part: its (last) attempt's start to the hand-off being recorded. */
  jobStartToHandOffMs?: Percentiles;
  /** Per allocator step over the phase (allocation_step_seconds): runs and mean ms. */
  allocatorSteps?: Record<string, { count: number; meanMs: number }>;
  /** Register transactions re-run over the phase (server_route_transaction_retries_total). */
  registerRetries?: number;
  /**
   * CPU time per match over the phase, by process (postgres: this database's backends and the
   * shared processes; redis is shared with anything else using it). Less load-dependent than
   * the latencies on a busy machine.
   */
  cpuMsPerMatch?: Record<string, number>;
}

/** What a phase's figures are taken against. */
interface PhaseStart {
  scrapes: Scrape[];
  cpu: CpuSample;
}

/** The sums and counts of a Prometheus text exposition, by series (name plus labels). */
type Scrape = Map<string, number>;

async function scrape(port: number): Promise<Scrape> {
  const text = await fetch(`http://${LOCALHOST}:${port}/metrics`, {
    signal: AbortSignal.timeout(5_000),
  })
    .then((response) => response.text())
    .catch(() => '');
  const series: Scrape = new Map();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.eE+-]+)$/.exec(line);
    if (match?.[1] && match[2]) series.set(match[1], Number(match[2]));
  }
  return series;
}

function sumOf(scrapes: readonly Scrape[], pattern: RegExp): Map<string, number> {
  const out = new Map<string, number>();
  for (const series of scrapes) {
    for (const [name, value] of series) {
      const key = pattern.exec(name)?.[1];
      if (key !== undefined) out.set(key, (out.get(key) ?? 0) + value);
    }
  }
  return out;
}

/** The pooled servers: one HTTP listener taking every server's hand-off, registering at once. */
class InstantServers {
  private server?: Server;
  registered = 0;
  failures: string[] = [];
  /** The latest hand-off of each match, once its registration was taken. */
  readonly registeredMatches = new Map<string, ServerHandOff>();

  constructor(private readonly apiUrl: string) {}

  async start(): Promise<number> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        response.writeHead(204).end();
        void this.register(JSON.parse(body) as ServerHandOff);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, LOCALHOST, resolve));
    return (this.server.address() as AddressInfo).port;
  }

  /** As a real server's client does: 409 (not ready yet) and 503 (contended) are retried. */
  private async register(handOff: ServerHandOff): Promise<void> {
    for (let attempt = 1; attempt <= 20; attempt += 1) {
      const status = await this.registerOnce(handOff);
      if (status !== 409 && status !== 503) return;
      await sleep(50 * attempt);
    }
  }

  private async registerOnce(handOff: ServerHandOff): Promise<number> {
    const response = await fetch(`${this.apiUrl}/v1/${ServerRoutes.register(handOff.serverId)}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${handOff.credential}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        protocolVersion: SERVER_PROTOCOL_VERSION,
        imageDigest: 'sha256:bench',
      }),
    }).catch((error: unknown) => ({ status: 0, text: () => Promise.resolve(String(error)) }));
    if (response.status === 200) {
      this.registered += 1;
      this.registeredMatches.set(handOff.matchId, handOff);
    } else this.failures.push(`${response.status} ${await response.text()}`);
    return response.status;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

interface BackfillFigures {
  backfills: number;
  failures: number;
  firstFailures?: string[];
  /** From the server's request to its connect report for the added player (target p99 <= 1,000). */
  backfill_request_to_player_connected_ms: Percentiles;
}

/** A game server's calls with the credential it was handed; anything but 2xx throws. */
function serverCalls(apiUrl: string, handOff: ServerHandOff) {
  return async <T = unknown>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${apiUrl}/v1/${route}`, {
      method,
      headers: {
        authorization: `Bearer ${handOff.credential}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
}

class Bench {
  readonly children: BenchChild[] = [];
  /** Each child's health (workers) or API port, where its /metrics is served. */
  readonly ports = new Map<BenchChild, number>();
  readonly keysDir = mkdtempSync(path.join(tmpdir(), 'mp-bench-keys-'));
  dataSource!: DataSource;
  redis!: Redis;
  matches!: MatchStore;
  tickets!: TicketStore;
  players = new PlayerStore();
  /** pgbench's writers' shape on this machine, measured at set-up: the burst's yardstick. */
  writersShape!: Ceiling;

  constructor(
    readonly config: MigrateConfig,
    readonly service: ServiceConfig,
  ) {}

  env(): Record<string, string> {
    const c = this.config;
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      DATABASE_HOST: c.DATABASE_HOST,
      DATABASE_PORT: String(c.DATABASE_PORT),
      DATABASE_USER: c.DATABASE_USER,
      DATABASE_NAME: DATABASE,
      // The apps follow the bench's own settings, so one environment variable compares the two.
      DATABASE_PREPARED_STATEMENTS: String(c.DATABASE_PREPARED_STATEMENTS),
      DATABASE_PIPELINING: String(c.DATABASE_PIPELINING),
      REDIS_HOST: this.service.REDIS_HOST,
      REDIS_PORT: String(this.service.REDIS_PORT),
      REDIS_KEY_PREFIX: PREFIX,
      LOG_LEVEL: 'warn',
      // 'pair' (2x2) for the backfill phase: a team keeps a player when its other one is a no-show.
      QUEUE_MODES: 'duel:1x2,pair:2x2',
      ...(this.service.REDIS_PASSWORD ? { REDIS_PASSWORD: this.service.REDIS_PASSWORD } : {}),
      ...(c.DATABASE_PASSWORD ? { DATABASE_PASSWORD: c.DATABASE_PASSWORD } : {}),
    };
  }

  async setUp(): Promise<void> {
    const admin = new Client({
      host: this.config.DATABASE_HOST,
      port: this.config.DATABASE_PORT,
      user: this.config.DATABASE_USER,
      password: this.config.DATABASE_PASSWORD,
      database: this.config.DATABASE_ADMIN_NAME,
    });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(DATABASE)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoteIdentifier(DATABASE)}`);
    await admin.end();
    const service = loadConfig(ServiceConfig, {
      REDIS_HOST: this.service.REDIS_HOST,
      REDIS_PORT: String(this.service.REDIS_PORT),
      REDIS_KEY_PREFIX: PREFIX,
    });
    this.dataSource = new DataSource(
      dataSourceOptions(
        { ...this.config, DATABASE_NAME: DATABASE, DATABASE_POOL_SIZE: 20 },
        { migrations: allMigrations },
      ),
    );
    await this.dataSource.initialize();
    await new Migrator(this.dataSource).up();
    progress("ceiling: pgbench in the outbox writers' shape, 8 clients for 10 s");
    this.writersShape = await writersShapeCeiling(
      this.dataSource,
      {
        host: this.config.DATABASE_HOST,
        port: this.config.DATABASE_PORT,
        user: this.config.DATABASE_USER,
        password: this.config.DATABASE_PASSWORD,
        database: DATABASE,
      },
      { clients: 8, seconds: 10, aggregates: 1000 },
    );
    progress(`ceiling: ${this.writersShape.tps} tps`);
    this.redis = new Redis({
      host: this.service.REDIS_HOST,
      port: this.service.REDIS_PORT,
      password: this.service.REDIS_PASSWORD,
      maxRetriesPerRequest: null,
    });
    const writer = new OutboxWriter();
    const signal = new OutboxSignal(this.redis, service);
    this.matches = new MatchStore(this.dataSource, writer, signal);
    this.tickets = new TicketStore(
      writer,
      signal,
      new CandidateProjection(this.redis, service, service, matcherShardPlan(service)),
    );
    await this.deletePrefix();
  }

  async start(name: string, script: string, env: Record<string, string>): Promise<BenchChild> {
    const portVariable = name === 'api' ? 'API_PORT' : 'HEALTH_PORT';
    const port = env[portVariable] ?? String(await freePort());
    // e.g. BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles every process.
    const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = startNodeChild(
      name,
      script,
      [],
      { ...this.env(), HEALTH_HOST: LOCALHOST, API_HOST: LOCALHOST, [portVariable]: port, ...env },
      nodeArgs,
    );
    this.children.push(child);
    this.ports.set(child, Number(port));
    await waitUntil(async () => {
      if (!child.alive()) throw new Error(`${name} exited:\n${child.output()}`);
      return (
        (await fetch(`http://${LOCALHOST}:${port}/health`, { signal: AbortSignal.timeout(2_000) }))
          .status === 200
      );
    }, `${name} to be healthy`);
    return child;
  }

  async stop(children: readonly BenchChild[]): Promise<void> {
    await Promise.all(children.map((child) => child.stop()));
    for (const child of children) this.children.splice(this.children.indexOf(child), 1);
  }

  keyFile(): string {
    const file = path.join(this.keysDir, 'join-keys.json');
    writeFileSync(file, JSON.stringify({ 'bench-1': randomBytes(32).toString('base64') }));
    return file;
  }

  /** A searching ticket per player, written through the stores; `regionOf(i)`: player i's nearest. */
  async searchingTickets(
    count: number,
    regionOf: (index: number) => string,
    mode = 'duel',
  ): Promise<{ playerId: string; ticketId: string }[]> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const out: { playerId: string; ticketId: string }[] = [];
      for (let i = 0; i < count; i += 1) {
        const playerId = await this.players.createGuest(
          manager,
          createHash('sha256').update(randomBytes(16)).digest(),
        );
        const ticketId = randomUUID();
        await this.tickets.create(
          unit,
          {
            id: ticketId,
            playerId,
            mode,
            rating: 1500,
            predictedRtt: predictedRttFor(regionOf(i)),
          },
          new Date(),
        );
        out.push({ playerId, ticketId });
      }
      return out;
    });
  }

  /** One match committed as the matcher commits one (a batch of one); its id. */
  async commitMatch(
    pair: readonly { playerId: string; ticketId: string }[],
    region: string,
    mode = 'duel',
  ): Promise<string> {
    const [matchId] = await this.commitBatch([{ pair, region, mode }]);
    return matchId!;
  }

  /**
   * Matches committed in one transaction in the shape of the matcher's MatchCommitter: the
   * tickets locked in one statement, then per match its insert and its tickets' transition; the
   * relay is signalled after the commit.
   */
  async commitBatch(
    matches: readonly {
      pair: readonly { playerId: string; ticketId: string }[];
      region: string;
      mode: string;
    }[],
  ): Promise<string[]> {
    const ids = await runInTransaction(this.dataSource, async (manager, unit) => {
      const locked = new Map(
        (
          await this.tickets.lockSearching(
            manager,
            matches.flatMap((match) => match.pair.map((p) => p.ticketId)),
          )
        ).map((row) => [row.id, row]),
      );
      const committed: string[] = [];
      for (const { pair, region, mode } of matches) {
        const now = new Date();
        const rows = pair.map((p) => locked.get(p.ticketId)!);
        const change = await this.matches.create(
          unit,
          {
            mode,
            region,
            participants: rows.map((row, index) => ({
              playerId: row.playerId,
              ticketId: row.id,
              team: index % 2,
              rating: row.rating,
            })),
          },
          now,
        );
        await this.tickets.transitionMany(
          unit,
          rows,
          () => ({ to: 'MATCHED', matchId: change.match.id }),
          now,
        );
        committed.push(change.match.id);
      }
      return committed;
    });
    await this.redis.publish(`${PREFIX}:outbox:committed`, '1');
    return ids;
  }

  /**
   * Commits `count` matches: all at once (rate 0) as the matcher commits a pass, MATCHER_COMMIT_BATCH
   * per transaction one transaction after another, or one at a time at `rate` per second.
   */
  async commitMatches(count: number, rate: number): Promise<string[]> {
    const tickets = await this.searchingTickets(count * 2, (player) =>
      regionOfMatch(Math.floor(player / 2)),
    );
    // Statistics as a live database has them, so plans use the indexes they would in production.
    await this.dataSource.query('ANALYZE');
    const matches = Array.from({ length: count }, (_, i) => ({
      pair: tickets.slice(i * 2, i * 2 + 2),
      region: regionOfMatch(i),
      mode: 'duel',
    }));
    const ids: string[] = [];
    if (rate === 0) {
      for (let i = 0; i < count; i += MATCHER_COMMIT_BATCH) {
        ids.push(...(await this.commitBatch(matches.slice(i, i + MATCHER_COMMIT_BATCH))));
      }
      return ids;
    }
    const started = Date.now();
    for (const [i, match] of matches.entries()) {
      const due = started + (i * 1000) / rate;
      if (due > Date.now()) await sleep(due - Date.now());
      ids.push(...(await this.commitBatch([match])));
    }
    return ids;
  }

  /** The children's metrics and CPU time now, for a before/after difference over a phase. */
  async phaseStart(): Promise<PhaseStart> {
    return { scrapes: await this.scrapeAll(), cpu: this.sampleCpu() };
  }

  sampleCpu(): CpuSample {
    return sampleCpu(
      this.children.map((child) => child.pid),
      [DATABASE],
    );
  }

  async scrapeAll(): Promise<Scrape[]> {
    return Promise.all(
      this.children
        .filter((child) => child.alive())
        .map((child) => scrape(this.ports.get(child) ?? 0)),
    );
  }

  /** Where the phase's time went, per match (BullMQ job timestamps) and per allocator step. */
  async breakdown(
    rows: readonly { id: string; created: Date; handed: Date }[],
    start: PhaseStart,
  ): Promise<Partial<PhaseFigures>> {
    const cpu = this.sampleCpu();
    const before = start.scrapes;
    const jobs = await Promise.all(
      rows.map((row) =>
        this.redis.hmget(`${PREFIX}:allocation:${row.id}`, 'timestamp', 'processedOn'),
      ),
    );
    const queued: number[] = [];
    const waited: number[] = [];
    const worked: number[] = [];
    rows.forEach((row, index) => {
      const [timestamp, processedOn] = (jobs[index] ?? []).map(Number);
      if (!timestamp || !processedOn) return;
      queued.push(timestamp - row.created.getTime());
      waited.push(processedOn - timestamp);
      worked.push(row.handed.getTime() - processedOn);
    });
    const after = await this.scrapeAll();
    const delta = (pattern: RegExp) => {
      const end = sumOf(after, pattern);
      const start = sumOf(before, pattern);
      return new Map([...end].map(([key, value]) => [key, value - (start.get(key) ?? 0)]));
    };
    const sums = delta(/^allocation_step_seconds_sum\{[^}]*step="([^"]+)"/);
    const counts = delta(/^allocation_step_seconds_count\{[^}]*step="([^"]+)"/);
    const allocatorSteps: Record<string, { count: number; meanMs: number }> = {};
    for (const [step, count] of counts) {
      if (count <= 0) continue;
      allocatorSteps[step] = {
        count,
        meanMs: Math.round(((sums.get(step) ?? 0) / count) * 10_000) / 10,
      };
    }
    const retries = delta(/^server_route_transaction_retries_total\{[^}]*route="(register)"/);
    // Clock ticks are 10 ms.
    const perMatch = (ticks: number) => Math.round((ticks * 10 * 10) / rows.length) / 10;
    const cpuMsPerMatch: Record<string, number> = {};
    for (const child of this.children) {
      const ticks = (cpu.byPid.get(child.pid) ?? 0) - (start.cpu.byPid.get(child.pid) ?? 0);
      cpuMsPerMatch[child.name] = perMatch(ticks);
    }
    for (const service of ['postgres', 'redis']) {
      const ticks = (cpu.byService.get(service) ?? 0) - (start.cpu.byService.get(service) ?? 0);
      cpuMsPerMatch[service] = perMatch(ticks);
    }
    return {
      matchedToJobQueuedMs: percentiles(queued),
      jobQueuedToStartMs: percentiles(waited),
      jobStartToHandOffMs: percentiles(worked),
      allocatorSteps,
      registerRetries: retries.get('register') ?? 0,
      cpuMsPerMatch,
    };
  }

  /** Waits until every match is ASSIGNMENT_READY; figures from the rows' own timestamps. */
  async measure(
    ids: readonly string[],
    timeoutMs: number,
    start?: PhaseStart,
    state = 'ASSIGNMENT_READY',
  ): Promise<PhaseFigures> {
    await waitUntil(
      async () => {
        const [row] = await this.dataSource.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = ANY($1::uuid[]) AND payload->>'to' = $2`,
          [ids, state],
        );
        return (row?.n ?? 0) >= ids.length;
      },
      `${ids.length} matches to reach ${state}`,
      { timeoutMs, intervalMs: 100 },
    ).catch(async (error: Error) => {
      const states = await this.dataSource.query<{ state: string; n: number }[]>(
        `SELECT state, count(*)::int AS n FROM matches WHERE id = ANY($1::uuid[]) GROUP BY state`,
        [ids],
      );
      const allocations = await this.dataSource.query<
        { handed: number; registered: number; n: number }[]
      >(
        `SELECT count(*)::int AS n, count(handed_off_at)::int AS handed, count(registered_at)::int AS registered
           FROM allocations WHERE match_id = ANY($1::uuid[])`,
        [ids],
      );
      const outputs = this.children
        .map((child) => `--- ${child.name}\n${child.output().slice(-2_000)}`)
        .join('\n');
      throw new Error(
        `${error.message}: matches ${JSON.stringify(states)}, allocations ${JSON.stringify(allocations)}\n${outputs}`,
      );
    });
    const rows = await this.dataSource.query<
      {
        id: string;
        created: Date;
        ready: Date;
        handed: Date;
        match_region: string;
        server_region: string | null;
      }[]
    >(
      `SELECT m.id, m.created_at AS created, o.occurred_at AS ready, a.handed_off_at AS handed,
              m.region AS match_region, a.region AS server_region
         FROM matches m JOIN outbox o ON o.aggregate_id = m.id AND o.payload->>'to' = $2
         JOIN allocations a ON a.match_id = m.id
        WHERE m.id = ANY($1::uuid[])`,
      [ids, state],
    );
    const first = Math.min(...rows.map((r) => r.created.getTime()));
    const lastHandOff = Math.max(...rows.map((r) => r.handed.getTime()));
    const seconds = (lastHandOff - first) / 1000;
    return {
      matches: rows.length,
      seconds: Math.round(seconds * 100) / 100,
      allocationsPerSecond: Math.round((rows.length / Math.max(seconds, 0.001)) * 10) / 10,
      matchedToAssignmentReadyMs: percentiles(
        rows.map((r) => r.ready.getTime() - r.created.getTime()),
      ),
      // Where the time goes: the allocator's part (to the credential hand-off), then registration.
      matchedToHandOffMs: percentiles(rows.map((r) => r.handed.getTime() - r.created.getTime())),
      handOffToAssignmentReadyMs: percentiles(
        rows.map((r) => r.ready.getTime() - r.handed.getTime()),
      ),
      wrongRegionAllocations: rows.filter((r) => r.server_region !== r.match_region).length,
      ...(await this.breakdown(rows, start ?? { scrapes: [], cpu: this.sampleCpu() })),
    };
  }

  /**
   * Backfills, one at a time: a 2x2 match is committed, allocated and registered (the instant
   * servers), and its server reports initial connect without player 1 (a no-show), so the match
   * goes on short. Then, as a dedicated server and a player would: the server requests one place
   * on team 1, a player (the SDK: session, probe, enqueue) queues, the real matcher fills the
   * request, the allocator publishes roster revision 2, the server polls the request, fetches and
   * verifies the revision and accepts it, the player fetches its assignment and verifies its join
   * token, and the server reports it connected. Timed: the request's POST to the connect report.
   */
  async backfills(
    count: number,
    apiUrl: string,
    servers: InstantServers,
    verifier: JoinTokenVerifier,
  ): Promise<BackfillFigures> {
    const samples: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const region = regionOfMatch(i);
      const players = await this.searchingTickets(4, () => region, 'pair');
      const matchId = await this.commitMatch(players, region, 'pair');
      await waitUntil(() => servers.registeredMatches.has(matchId), `match ${matchId} registered`);
      const handOff = servers.registeredMatches.get(matchId)!;
      const server = serverCalls(apiUrl, handOff);
      await server('POST', ServerRoutes.initialConnect(handOff.serverId), {
        connectedPlayerIds: players.filter((_, p) => p !== 1).map((p) => p.playerId),
      });
      const player = new PlayerClient({ baseUrl: apiUrl });
      await player.createSession();
      await player.probeAll([region]);

      const started = performance.now();
      const request = await server<BackfillResponse>(
        'POST',
        ServerRoutes.backfills(handOff.serverId),
        {
          team: 1,
          slots: 1,
          timeoutSeconds: 30,
        },
      );
      const ticket = await player.enqueue('pair');
      let published: BackfillResponse | undefined;
      await waitUntil(
        async () => {
          published = await server<BackfillResponse>(
            'GET',
            ServerRoutes.backfill(handOff.serverId, request.requestId),
          );
          return published.state === 'PUBLISHED' || published.state === 'EXPIRED';
        },
        `backfill ${request.requestId} published`,
        { intervalMs: 25, timeoutMs: 35_000 },
      );
      if (published?.state !== 'PUBLISHED') {
        failures.push(`${request.requestId}: ${published?.state}`);
        continue;
      }
      const roster = await server<RosterResponse>('GET', ServerRoutes.roster(handOff.serverId));
      const now = Date.now();
      const expect = { serverId: handOff.serverId, matchId, now };
      const entries = roster.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken }));
      const check = verifier.verifyRoster(roster.manifest, entries, expect);
      if (!check.ok || roster.revision !== 2) {
        failures.push(`${matchId}: revision ${roster.revision} ${check.ok ? 'ok' : check.reason}`);
        continue;
      }
      await server('POST', ServerRoutes.backfillAccept(handOff.serverId, request.requestId), {
        rosterRevision: roster.revision,
      });
      const matched = await player.waitForTicket(ticket.id, (t) => t.matchId !== undefined, {
        timeoutMs: 10_000,
        pollMs: 25,
      });
      const assignment = await player.waitForAssignment(matched.matchId!, { pollMs: 25 });
      if (!verifier.verify(assignment.joinToken, expect).ok) {
        failures.push(`${matchId}: the added player's token did not verify`);
        continue;
      }
      await server('POST', ServerRoutes.backfillConnect(handOff.serverId, request.requestId), {
        connectedPlayerIds: [player.session!.playerId],
      });
      samples.push(performance.now() - started);
      await server('POST', ServerRoutes.result(handOff.serverId), { outcome: 'COMPLETED' });
    }
    return {
      backfills: samples.length,
      failures: failures.length,
      ...(failures.length > 0 ? { firstFailures: failures.slice(0, 3) } : {}),
      backfill_request_to_player_connected_ms: percentiles(samples),
    };
  }

  async deletePrefix(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await this.redis.del(...keys);
    } while (cursor !== '0');
  }

  async tearDown(): Promise<void> {
    await this.stop([...this.children]);
    await this.deletePrefix().catch(() => undefined);
    this.redis?.disconnect();
    if (this.dataSource?.isInitialized) await this.dataSource.destroy();
    rmSync(this.keysDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2), FLAGS);
  if (flags.help) {
    process.stdout.write(
      usage(
        'npm run bench:allocation --',
        'Allocation throughput and MATCHED-to-ASSIGNMENT_READY latency',
        FLAGS,
      ),
    );
    return;
  }
  const burst = Number(flags.burst);
  const paced = Number(flags.paced);
  const rate = Number(flags.rate);
  const local = Number(flags.local);
  const pgStats = flags['pg-stats'] === true;
  const scratch = pgStats ? await startScratchCluster() : undefined;
  const migrate = loadConfig(
    MigrateConfig,
    scratch
      ? {
          ...process.env,
          DATABASE_URL: undefined,
          DATABASE_HOST: LOCALHOST,
          DATABASE_PORT: String(scratch.port),
          DATABASE_USER: scratch.user,
          DATABASE_PASSWORD: undefined,
          DATABASE_ADMIN_NAME: scratch.adminDatabase,
        }
      : process.env,
  );
  const bench = new Bench(migrate, loadConfig(ServiceConfig));
  installCleanup(async () => {
    await bench.tearDown();
    await scratch?.destroy();
  });
  let watch: ClusterWatch | undefined;
  try {
    await bench.setUp();
    if (scratch) progress(`--pg-stats: a scratch PostgreSQL cluster on port ${scratch.port}`);
    watch = await ClusterWatch.open(
      {
        host: migrate.DATABASE_HOST,
        port: migrate.DATABASE_PORT,
        user: migrate.DATABASE_USER,
        password: migrate.DATABASE_PASSWORD,
        database: migrate.DATABASE_ADMIN_NAME,
      },
      DATABASE,
      pgStats,
    );
    const keyFile = bench.keyFile();
    const apiPort = await freePort();
    const apiUrl = `http://${LOCALHOST}:${apiPort}`;
    progress('starting api and dispatcher');
    await bench.start('api', 'dist/apps/api/src/main.js', { API_PORT: String(apiPort) });
    await bench.start('dispatcher', 'dist/apps/dispatcher/src/main.js', {
      OUTBOX_POLL_INTERVAL_MS: '100',
    });

    const servers = new InstantServers(apiUrl);
    const handOffPort = await servers.start();
    const pool = poolByRegion(burst + paced, LOCALHOST, handOffPort);
    const allocatorEnv = {
      JOIN_KEYS_FILE: keyFile,
      JOIN_ACTIVE_KEY_ID: 'bench-1',
      ALLOCATOR_API_URL: apiUrl,
      ALLOCATION_PROVIDER: 'static',
      STATIC_SERVERS_BY_REGION: pool,
      STATIC_HANDOFF_URL: `http://{host}:{port}/handoff/{id}`,
      ...(Number(flags['allocator-concurrency']) > 0
        ? { ALLOCATOR_CONCURRENCY: String(flags['allocator-concurrency']) }
        : {}),
    };
    const allocators: BenchChild[] = [];
    for (let i = 0; i < Number(flags.allocators); i += 1) {
      allocators.push(
        await bench.start(`allocator-${i + 1}`, 'dist/apps/allocator/src/main.js', allocatorEnv),
      );
    }

    progress(`static, burst: ${burst} matches at once`);
    const burstBefore = await bench.phaseStart();
    const burstTicks = await watch.begin();
    const burstIds = await bench.commitMatches(burst, 0);
    const staticBurst = await bench.measure(burstIds, 120_000, burstBefore);
    const burstPostgres = await watch.end(burstTicks, burstIds.length);
    progress(`  ${JSON.stringify(staticBurst)}`);
    if (burstPostgres.statements) {
      progress(`burst statements per match:\n${statementTable(burstPostgres.statements)}`);
    }

    let staticPaced: PhaseFigures | undefined;
    if (paced > 0) {
      progress(`static, paced: ${paced} matches at ${rate}/s`);
      const pacedBefore = await bench.phaseStart();
      const pacedIds = await bench.commitMatches(paced, rate);
      staticPaced = await bench.measure(pacedIds, 120_000, pacedBefore);
      progress(`  ${JSON.stringify(staticPaced)}`);
    }
    let backfill: BackfillFigures | undefined;
    const backfills = Number(flags.backfill);
    if (backfills > 0) {
      progress(`static, backfill: ${backfills} no-shows replaced one at a time`);
      const matcher = await bench.start('matcher', 'dist/apps/matcher/src/main.js', {});
      const verifier = new JoinTokenVerifier(KeySet.loadFile(keyFile));
      backfill = await bench.backfills(backfills, apiUrl, servers, verifier);
      progress(`  ${JSON.stringify(backfill)}`);
      await bench.stop([matcher]);
    }
    if (servers.failures.length > 0)
      progress(`register failures: ${servers.failures.slice(0, 3).join(' | ')}`);
    await bench.stop(allocators);
    await servers.stop();

    let localPhase: PhaseFigures | undefined;
    if (local > 0) {
      progress(
        `local, paced: ${local} matches at ${Number(flags['local-rate'])}/s, each on a launched game server`,
      );
      const localAllocator = await bench.start(
        'allocator-local',
        'dist/apps/allocator/src/main.js',
        {
          ...allocatorEnv,
          ALLOCATION_PROVIDER: 'local',
          LOCAL_SERVER_ENTRY: path.join(REPO_ROOT, 'dist/apps/game-server/src/main.js'),
          LOCAL_SERVER_OUTPUT: 'ignore',
          LOCAL_SERVER_ENV: 'CONNECT_DEADLINE_MS=1000,LOG_LEVEL=warn',
          LOCAL_SERVER_REGIONS: REGIONS.join(','),
        },
      );
      const localBefore = await bench.phaseStart();
      const localIds = await bench.commitMatches(local, Number(flags['local-rate']));
      localPhase = await bench.measure(localIds, 120_000, localBefore);
      progress(`  ${JSON.stringify(localPhase)}`);
      // Let the servers report their (empty) initial connect and exit before the allocator stops.
      await sleep(3_000);
      await bench.stop([localAllocator]);
    }

    const result = {
      bench: 'allocation',
      regions: REGIONS,
      // Target 0: every region has room for all of its matches.
      wrong_region_allocations:
        staticBurst.wrongRegionAllocations +
        (staticPaced?.wrongRegionAllocations ?? 0) +
        (localPhase?.wrongRegionAllocations ?? 0),
      writers_shape_ceiling_tps: bench.writersShape.tps,
      // The burst against this machine's PostgreSQL (an allocation is several transactions).
      burst_fraction_of_writers_shape:
        Math.round((staticBurst.allocationsPerSecond / bench.writersShape.tps) * 10_000) / 10_000,
      // The whole cluster's CPU over the burst (the matches' commits included), per match.
      burst_postgres_cpu_ms_per_match: burstPostgres.postgresCpuMsPerEvent,
      ...(burstPostgres.statements ? { burst_statements: burstPostgres.statements } : {}),
      targets: {
        burst_at_least_0_02_of_writers_shape:
          staticBurst.allocationsPerSecond >= 0.02 * bench.writersShape.tps,
        paced_p99_at_most_500_ms: staticPaced
          ? staticPaced.matchedToAssignmentReadyMs.p99 <= 500
          : null,
        no_wrong_region_allocations:
          staticBurst.wrongRegionAllocations +
            (staticPaced?.wrongRegionAllocations ?? 0) +
            (localPhase?.wrongRegionAllocations ?? 0) ===
          0,
      },
      static: {
        allocationsPerSecond: staticBurst.allocationsPerSecond,
        burst: staticBurst,
        ...(staticPaced ? { paced: { ratePerSecond: rate, ...staticPaced } } : {}),
      },
      ...(localPhase
        ? { local: { ratePerSecond: Number(flags['local-rate']), ...localPhase } }
        : {}),
      ...(backfill ? { backfill } : {}),
    };
    progress(`results written to ${writeResults(REPO_ROOT, flags.results as string, result)}`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await watch?.close();
    await bench.tearDown();
    await scratch?.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof UsageError ? `usage: ${error.message}` : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(error instanceof UsageError ? 2 : 1);
});
