/**
 * Client notification benchmark: commit-to-client latency through the whole pipeline. C players
 * hold SDK NotificationSubscriber sockets spread over A API processes; matches of two players
 * (one on each of two replicas) change state through MatchStore (the production writer: state
 * change + outbox row in one transaction, relay wake-up after commit); a real dispatcher process
 * delivers each row over the Redis transport and the API replicas fan it out to their sockets:
 * once per --fanouts entry (broadcast: every replica hears every event; targeted: only the
 * replicas of its recipients), so both are measured in one run and compared per 1,000 deliveries.
 *
 * Players, sessions and tickets are seeded with SQL (the bench measures delivery, not entry); a
 * session token is made the way SessionService makes one (`newSecret` + `secretHash`). The bench
 * also listens on the notification channel itself, so commit->client splits into commit->publish
 * (the dispatcher) and publish->client (the API fan-out and the socket).
 * `npm run bench:notify -- --help`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { NOTIFY_FANOUTS, type NotifyFanout } from '../../apps/dispatcher/src/dispatcher.config';
import {
  notificationPattern,
  playerNotificationChannel,
  type MatchEventMessage,
  type StateNotification,
} from '@matchplane/contracts';
import type { MatchCommand } from '@matchplane/domain';
import { MatchStore } from '@matchplane/matches';
import { allMigrations } from '@matchplane/migrations';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import {
  Migrator,
  dataSourceOptions,
  quoteIdentifier,
  runInTransaction,
} from '@matchplane/persistence';
import { SESSION_TOKEN_PREFIX, newSecret, secretHash } from '@matchplane/players';
import { NotificationSubscriber, type NotificationSubscription } from '@matchplane/sdk';
import { writersShapeCeiling } from './pgbench-ceiling';
import { envPairs, parseFlags, usage, UsageError, type FlagSpec } from './bench.cli';
import {
  REPO_ROOT,
  cpuUsage,
  deleteRedisPrefix,
  freePort,
  installCleanup,
  isStopping,
  sampleCpu,
  sleep,
  startNodeChild,
  waitUntil,
  type BenchChild,
} from './bench.processes';
import { percentiles } from './delivery.recorder';

const LOCALHOST = '127.0.0.1';
const DATABASE = 'mp_bench_notify';
const PREFIX = 'mp_bench_notify';
const WARM_UP_SECONDS = 2;
/** Revision 1 (created) plus these four: each match yields five events. */
const STEPS: readonly MatchCommand[] = [
  { to: 'PROCESS_READY' },
  { to: 'ASSIGNMENT_READY' },
  { to: 'IN_PROGRESS' },
  { to: 'COMPLETED' },
];
const EVENTS_PER_MATCH = STEPS.length + 1;

const FLAGS: FlagSpec[] = [
  {
    name: 'clients',
    description: 'WebSocket clients (one player each)',
    int: { min: 2, max: 20_000, default: 5_000 },
  },
  { name: 'apis', description: 'API processes', int: { min: 1, max: 8, default: 4 } },
  {
    name: 'fanouts',
    description:
      "the dispatchers' NOTIFY_FANOUT for each measured phase, in order (comma-separated: broadcast, targeted)",
    string: { default: 'broadcast,targeted' },
  },
  {
    name: 'rate',
    description:
      "match events/s committed, all writers together (0: --rate-percent of the writers' shape ceiling pgbench measures at set-up)",
    int: { min: 0, max: 100_000, default: 0 },
  },
  {
    name: 'rate-percent',
    description: "with --rate=0: the pace as a percentage of the writers' shape ceiling",
    int: { min: 1, max: 100, default: 20 },
  },
  {
    name: 'seconds',
    description: 'length of the measured phase',
    int: { min: 1, max: 600, default: 10 },
  },
  { name: 'writers', description: 'concurrent writers', int: { min: 1, max: 128, default: 8 } },
  {
    name: 'dispatchers',
    description: 'dispatcher processes',
    int: { min: 1, max: 8, default: 1 },
  },
  {
    name: 'connect-concurrency',
    description: 'clients connecting at once during set-up',
    int: { min: 1, max: 5_000, default: 100 },
  },
  {
    name: 'api-env',
    description: 'extra API environment, K=V[,K=V...]',
    string: { default: '' },
  },
  {
    name: 'dispatcher-env',
    description: 'extra dispatcher environment, K=V[,K=V...]',
    string: { default: '' },
  },
  {
    name: 'results',
    description: 'where the result JSON is written',
    string: { default: 'test/bench/results/notify.json' },
  },
  {
    name: 'direct',
    description:
      'publish the notifications straight to the channel (no outbox, no dispatcher): the API fan-out alone',
    switch: true,
  },
  { name: 'help', description: 'print this and exit', switch: true },
];

interface Options {
  clients: number;
  apis: number;
  fanouts: NotifyFanout[];
  rate: number;
  ratePercent: number;
  seconds: number;
  writers: number;
  dispatchers: number;
  connectConcurrency: number;
  apiEnv: Record<string, string>;
  dispatcherEnv: Record<string, string>;
  results: string;
  direct: boolean;
}

function progress(line: string): void {
  process.stderr.write(`[bench:notify] ${line}\n`);
}

// ---- set-up ------------------------------------------------------------------------------------

async function withAdmin<T>(
  service: ServiceConfig,
  admin: string,
  work: (c: Client) => Promise<T>,
) {
  const client = new Client({
    host: LOCALHOST,
    port: service.DATABASE_PORT,
    user: service.DATABASE_USER,
    password: service.DATABASE_PASSWORD,
    database: admin,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

interface Player {
  id: string;
  token: string;
}

/** Players with live sessions, seeded with SQL; their tokens as SessionService issues them. */
async function seedPlayers(dataSource: DataSource, count: number): Promise<Player[]> {
  const players: Player[] = Array.from({ length: count }, () => ({
    id: randomUUID(),
    token: newSecret(SESSION_TOKEN_PREFIX),
  }));
  for (let i = 0; i < players.length; i += 5_000) {
    const batch = players.slice(i, i + 5_000);
    await dataSource.query(`INSERT INTO players (id) SELECT unnest($1::uuid[])`, [
      batch.map((p) => p.id),
    ]);
    await dataSource.query(
      `INSERT INTO sessions (player_id, token_hash, expires_at)
       SELECT p, decode(h, 'hex'), now() + interval '1 day' FROM unnest($1::uuid[], $2::text[]) AS s(p, h)`,
      [batch.map((p) => p.id), batch.map((p) => secretHash(p.token).toString('hex'))],
    );
  }
  return players;
}

/** One finished ticket per player and round: each match participation needs its own. */
async function seedTickets(
  dataSource: DataSource,
  players: readonly Player[],
  rounds: number,
): Promise<Map<string, string>[]> {
  const byRound: Map<string, string>[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const rows = await dataSource.query<{ id: string; player_id: string }[]>(
      `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, predicted_rtt, finished_at)
       SELECT unnest($1::uuid[]), 'duel', 'COMPLETED', 1500, now(), now(), '{"eu-west": 20}', now()
       RETURNING id, player_id`,
      [players.map((p) => p.id)],
    );
    byRound.push(new Map(rows.map((row) => [row.player_id, row.id])));
  }
  return byRound;
}

// ---- processes ---------------------------------------------------------------------------------

function baseEnv(service: ServiceConfig): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATABASE_HOST: LOCALHOST,
    DATABASE_PORT: String(service.DATABASE_PORT),
    DATABASE_USER: service.DATABASE_USER,
    DATABASE_NAME: DATABASE,
    REDIS_HOST: LOCALHOST,
    REDIS_PORT: String(service.REDIS_PORT),
    REDIS_KEY_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    ...(service.DATABASE_PASSWORD ? { DATABASE_PASSWORD: service.DATABASE_PASSWORD } : {}),
    ...(service.REDIS_PASSWORD ? { REDIS_PASSWORD: service.REDIS_PASSWORD } : {}),
  };
}

async function startHealthy(
  name: string,
  script: string,
  env: Record<string, string>,
  url: string,
): Promise<BenchChild> {
  const child = startNodeChild(name, script, [], env);
  await waitUntil(async () => {
    if (!child.alive()) throw new Error(`${name} exited:\n${child.output()}`);
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return response.status === 200;
  }, `${name} to be healthy`).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  return child;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kib / 1024) * 10) / 10;
}

// ---- recording ---------------------------------------------------------------------------------

/** Commit, publish and per-client arrival times (this process's clock) of one phase's events. */
class Phase {
  readonly commits = new Map<string, number>();
  readonly publishes = new Map<string, number>();
  readonly deliveries = new Map<string, number>();
  readonly commitToClient: number[] = [];
  readonly publishToClient: number[] = [];
  readonly commitToPublish: number[] = [];
  firstCommitAt = Number.POSITIVE_INFINITY;
  lastCommitAt = 0;
  lastDeliveryAt = 0;
  failed = 0;

  constructor(private readonly recipients: number) {}

  committed(key: string): void {
    const now = performance.now();
    this.commits.set(key, now);
    this.firstCommitAt = Math.min(this.firstCommitAt, now);
    this.lastCommitAt = now;
  }

  published(key: string, at: number): void {
    if (this.publishes.has(key)) return;
    this.publishes.set(key, at);
    const committedAt = this.commits.get(key);
    if (committedAt !== undefined) this.commitToPublish.push(Math.max(0, at - committedAt));
  }

  delivered(key: string, at: number): void {
    const committedAt = this.commits.get(key);
    if (committedAt === undefined) return; // warm-up, or a commit whose reply is still in flight
    this.deliveries.set(key, (this.deliveries.get(key) ?? 0) + 1);
    this.lastDeliveryAt = Math.max(this.lastDeliveryAt, at);
    this.commitToClient.push(Math.max(0, at - committedAt));
    const publishedAt = this.publishes.get(key);
    if (publishedAt !== undefined) this.publishToClient.push(Math.max(0, at - publishedAt));
  }

  deliveredCount(): number {
    let count = 0;
    for (const n of this.deliveries.values()) count += n;
    return count;
  }

  complete(): boolean {
    return this.deliveredCount() >= this.commits.size * this.recipients;
  }
}

// ---- the run -----------------------------------------------------------------------------------

function optionsFrom(argv: readonly string[]): Options {
  const command = 'npm run bench:notify --';
  const summary =
    'Notification fan-out benchmark. Needs PostgreSQL and Redis on 127.0.0.1 and a build.';
  try {
    const flags = parseFlags(argv, FLAGS);
    if (flags.help === true) {
      process.stdout.write(usage(command, summary, FLAGS));
      process.exit(0);
    }
    return {
      clients: flags.clients as number,
      apis: flags.apis as number,
      fanouts: fanoutsFrom(flags.fanouts as string),
      rate: flags.rate as number,
      ratePercent: flags['rate-percent'] as number,
      seconds: flags.seconds as number,
      writers: flags.writers as number,
      dispatchers: flags.dispatchers as number,
      connectConcurrency: flags['connect-concurrency'] as number,
      apiEnv: envPairs('api-env', flags['api-env'] as string),
      dispatcherEnv: envPairs('dispatcher-env', flags['dispatcher-env'] as string),
      results: flags.results as string,
      direct: flags.direct === true,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench:notify: ${error.message}\n\n${usage(command, summary, FLAGS)}`);
    process.exit(2);
  }
}

function fanoutsFrom(raw: string): NotifyFanout[] {
  const fanouts = raw.split(',').map((item) => item.trim());
  for (const fanout of fanouts) {
    if (!(NOTIFY_FANOUTS as readonly string[]).includes(fanout))
      throw new UsageError(`--fanouts: ${fanout} is not one of ${NOTIFY_FANOUTS.join(', ')}`);
  }
  if (fanouts.length === 0 || new Set(fanouts).size !== fanouts.length)
    throw new UsageError('--fanouts: name each fan-out once');
  return fanouts as NotifyFanout[];
}

/** Per 1,000 deliveries to clients a second: what a fan-out costs, comparable across paces. */
function perThousandDeliveries(cpuPct: number, deliveredPerSecond: number): number {
  return deliveredPerSecond > 0
    ? Math.round((cpuPct / (deliveredPerSecond / 1000)) * 100) / 100
    : 0;
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2));
  const service: ServiceConfig = {
    ...loadConfig(ServiceConfig),
    DATABASE_HOST: LOCALHOST,
    REDIS_HOST: LOCALHOST,
    DATABASE_NAME: DATABASE,
    DATABASE_POOL_SIZE: options.writers + 2,
    REDIS_KEY_PREFIX: PREFIX,
  };
  const admin = loadConfig(MigrateConfig).DATABASE_ADMIN_NAME;
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
  const matchCount = Math.floor(options.clients / 2);
  const players = matchCount * 2;

  try {
    progress(
      `setup: database ${DATABASE}, ${players} clients over ${options.apis} API(s), ` +
        `${options.dispatchers} dispatcher(s), ${options.rate} events/s for ${options.seconds} s`,
    );
    await deleteRedisPrefix(redis, PREFIX);
    await withAdmin(service, admin, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(DATABASE)} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${quoteIdentifier(DATABASE)}`);
    });
    closers.push(() =>
      withAdmin(service, admin, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(DATABASE)} WITH (FORCE)`),
      ),
    );
    const dataSource = new DataSource(
      dataSourceOptions(service, { migrations: allMigrations, applicationName: 'mp-bench-notify' }),
    );
    await dataSource.initialize();
    closers.push(() => dataSource.destroy());
    await new Migrator(dataSource).up();
    progress(
      `ceiling: pgbench in the writers' shape, ${options.writers} clients for ${options.seconds} s`,
    );
    const ceiling = await writersShapeCeiling(
      dataSource,
      {
        host: LOCALHOST,
        port: service.DATABASE_PORT,
        user: service.DATABASE_USER,
        password: service.DATABASE_PASSWORD,
        database: DATABASE,
      },
      { clients: options.writers, seconds: options.seconds, aggregates: 1000 },
    );
    if (options.rate === 0)
      options.rate = Math.max(1, Math.round((ceiling.tps * options.ratePercent) / 100));
    progress(`ceiling: ${ceiling.tps} tps; pacing the writers at ${options.rate} events/s`);
    const seeded = await seedPlayers(dataSource, players);
    const eventsNeeded = Math.ceil(
      options.rate * (WARM_UP_SECONDS + options.seconds) * 1.2 * options.fanouts.length,
    );
    const rounds = Math.max(1, Math.ceil(eventsNeeded / (EVENTS_PER_MATCH * matchCount)));
    const tickets = await seedTickets(dataSource, seeded, rounds);
    await dataSource.query('VACUUM ANALYZE');
    progress(`seeded ${players} players with sessions and ${rounds} round(s) of tickets`);

    const env = baseEnv(service);
    /** The dispatchers of the phase being run (each phase starts its own, with its fan-out). */
    let dispatchers: BenchChild[] = [];
    const startDispatchers = async (fanout: NotifyFanout): Promise<BenchChild[]> => {
      const started: BenchChild[] = [];
      for (let i = 0; i < (options.direct ? 0 : options.dispatchers); i += 1) {
        const port = await freePort();
        started.push(
          await startHealthy(
            `dispatcher-${fanout}-${i + 1}`,
            'dist/apps/dispatcher/src/main.js',
            {
              ...env,
              HEALTH_HOST: LOCALHOST,
              HEALTH_PORT: String(port),
              NOTIFY_FANOUT: fanout,
              ...options.dispatcherEnv,
            },
            `http://${LOCALHOST}:${port}/health`,
          ),
        );
      }
      return started;
    };
    const apis: { child: BenchChild; baseUrl: string }[] = [];
    for (let i = 0; i < options.apis; i += 1) {
      const port = await freePort();
      const baseUrl = `http://${LOCALHOST}:${port}`;
      const child = await startHealthy(
        `api-${i + 1}`,
        'dist/apps/api/src/main.js',
        {
          ...env,
          API_HOST: LOCALHOST,
          API_PORT: String(port),
          // Every client connects from 127.0.0.1; the per-session socket cap stays at its default.
          NOTIFY_MAX_SOCKETS_PER_ADDRESS: '0',
          ...options.apiEnv,
        },
        `${baseUrl}/health`,
      );
      apis.push({ child, baseUrl });
    }
    closers.push(() =>
      Promise.all([...apis.map((a) => a.child), ...dispatchers].map((c) => c.stop())),
    );
    const dispatchersSaid: string[] = [];
    await sleep(1_000);
    const rssBefore = apis.map((api) => rssMiB(api.child.pid));

    // Players 2j and 2j+1 play match j, on different replicas when there are several.
    const recipients = 2;
    /** The phase being measured; arrivals outside one (connect, warm-up) are not recorded. */
    const recording: { phase?: Phase } = {};
    let reconnects = 0;
    let resyncs = 0;
    let orderViolations = 0;
    const subscriptions: NotificationSubscription[] = [];
    closers.push(() => {
      for (const subscription of subscriptions) subscription.close();
      return Promise.resolve();
    });
    const connectStarted = performance.now();
    for (let i = 0; i < players; i += options.connectConcurrency) {
      const batch = seeded.slice(i, i + options.connectConcurrency);
      await Promise.all(
        batch.map(async (player, offset) => {
          const api = apis[(i + offset) % apis.length]!;
          const last = new Map<string, number>();
          const subscription = new NotificationSubscriber({
            baseUrl: api.baseUrl,
            token: player.token,
          }).subscribe({
            onEvent: (event: MatchEventMessage) => {
              const at = performance.now();
              if ((last.get(event.matchId) ?? 0) + 1 !== event.revision) orderViolations += 1;
              last.set(event.matchId, event.revision);
              recording.phase?.delivered(`${event.matchId}/${event.revision}`, at);
            },
            onResync: () => (resyncs += 1),
            onConnection: (change) => {
              if (change.state === 'reconnecting') reconnects += 1;
            },
          });
          subscriptions.push(subscription);
          await subscription.ready;
        }),
      );
    }
    const connectSeconds = (performance.now() - connectStarted) / 1000;
    progress(`${players} clients connected in ${connectSeconds.toFixed(1)} s`);
    await sleep(2_000);
    const rssConnected = apis.map((api) => rssMiB(api.child.pid));

    // The bench's own subscriber on the notification channels (the broadcast one and every
    // player's, NOTIFY_FANOUT either way): when the dispatcher first published an event.
    const listener = new Redis({
      host: LOCALHOST,
      port: service.REDIS_PORT,
      password: service.REDIS_PASSWORD,
    });
    closers.push(() => listener.quit());
    listener.on('pmessage', (_pattern: string, _channel: string, message: string) => {
      const at = performance.now();
      const data = (JSON.parse(message) as { data?: { aggregateId?: string; revision?: number } })
        .data;
      if (data?.aggregateId && data.revision)
        recording.phase?.published(`${data.aggregateId}/${data.revision}`, at);
    });
    await listener.psubscribe(`${notificationPattern(PREFIX)}*`);

    // The writers: one production write per event, each match's steps chained in order.
    const channel = notificationPattern(PREFIX);
    const signal = new OutboxSignal(redis, service);
    const store = new MatchStore(dataSource, new OutboxWriter(), signal);
    const matchIds = Array.from({ length: rounds * matchCount }, () => randomUUID());
    /** With --direct, how this phase's packets are published by hand. */
    let directFanout: NotifyFanout = 'broadcast';
    const previous = new Map<string, Promise<void>>();
    let next = 0;
    const write = async (target: Phase | undefined): Promise<void> => {
      const k = next;
      next += 1;
      const round = Math.floor(k / (EVENTS_PER_MATCH * matchCount));
      if (round >= rounds) throw new Error('ran out of seeded tickets');
      const within = k % (EVENTS_PER_MATCH * matchCount);
      const step = Math.floor(within / matchCount);
      const j = within % matchCount;
      const matchId = matchIds[round * matchCount + j]!;
      const before = previous.get(matchId) ?? Promise.resolve();
      const done = before.then(async () => {
        if (options.direct) {
          // The fan-out alone: the packet the dispatcher's ClientProxy would emit, sent by hand.
          const notification: StateNotification = {
            event: 'match.state_changed',
            aggregateType: 'match',
            aggregateId: matchId,
            revision: step + 1,
            state: step === 0 ? 'ALLOCATING' : STEPS[step - 1]!.to,
            occurredAt: new Date().toISOString(),
            playerIds: [seeded[2 * j]!.id, seeded[2 * j + 1]!.id],
          };
          target?.committed(`${matchId}/${step + 1}`);
          const channels =
            directFanout === 'targeted'
              ? notification.playerIds.map((id) => playerNotificationChannel(PREFIX, id))
              : [channel];
          await Promise.all(
            channels.map((to) =>
              redis.publish(to, JSON.stringify({ pattern: to, data: notification })),
            ),
          );
          return;
        }
        if (step === 0) {
          const participants = [seeded[2 * j]!, seeded[2 * j + 1]!].map((p, team) => ({
            playerId: p.id,
            ticketId: tickets[round]!.get(p.id)!,
            team,
            rating: 1500,
          }));
          await runInTransaction(dataSource, (manager, unit) =>
            store.create(unit, { id: matchId, mode: 'duel', region: 'eu-west', participants }),
          );
        } else {
          await store.transitionNow(matchId, STEPS[step - 1]!);
        }
        target?.committed(`${matchId}/${step + 1}`);
      });
      previous.set(
        matchId,
        done.catch(() => undefined),
      );
      try {
        await done;
      } catch (error) {
        if (target) target.failed += 1;
        if ((target?.failed ?? 0) > 100) throw error;
      }
    };
    const paced = async (seconds: number, target: Phase | undefined): Promise<void> => {
      const start = performance.now();
      const deadline = start + seconds * 1000;
      const gapMs = 1000 / options.rate;
      await Promise.all(
        Array.from({ length: options.writers }, async (_, w) => {
          for (let k = 0; ; k += 1) {
            const due = start + (k * options.writers + w) * gapMs;
            if (due >= deadline || performance.now() >= deadline) return;
            const wait = due - performance.now();
            if (wait > 0) await sleep(wait);
            await write(target);
          }
        }),
      );
    };

    const runPhase = async (fanout: NotifyFanout) => {
      directFanout = fanout;
      dispatchers = await startDispatchers(fanout);
      progress(`${fanout}: warm-up: ${WARM_UP_SECONDS} s at ${options.rate}/s`);
      await paced(WARM_UP_SECONDS, undefined);
      await sleep(1_000);

      progress(`${fanout}: measuring: ${options.seconds} s at ${options.rate}/s`);
      const measured = new Phase(recipients);
      recording.phase = measured;
      const pids = [...apis.map((a) => a.child.pid), ...dispatchers.map((d) => d.pid)];
      const cpuBefore = sampleCpu(pids, [DATABASE]);
      await paced(options.seconds, measured);
      const writeSeconds = (measured.lastCommitAt - measured.firstCommitAt) / 1000;
      let progressAt = performance.now();
      let seen = -1;
      while (!measured.complete() && performance.now() - progressAt < 15_000) {
        const count = measured.deliveredCount();
        if (count !== seen) {
          seen = count;
          progressAt = performance.now();
        }
        await sleep(50);
      }
      const cpuAfter = sampleCpu(pids, [DATABASE]);
      const missing = [...measured.commits.keys()]
        .filter((key) => (measured.deliveries.get(key) ?? 0) < recipients)
        .slice(0, 10)
        .map((key) => ({
          event: key,
          deliveries: measured.deliveries.get(key) ?? 0,
          published: measured.publishes.has(key),
        }));
      const rssEnd = apis.map((api) => rssMiB(api.child.pid));
      const delivered = measured.deliveredCount();
      const deliverySeconds = Math.max(
        0.001,
        (measured.lastDeliveryAt - measured.firstCommitAt) / 1000,
      );
      const expected = measured.commits.size * recipients;
      const perApi = players / apis.length;
      const rssPer1000 = apis.map(
        (_, i) => Math.round(((rssConnected[i]! - rssBefore[i]!) / (perApi / 1000)) * 10) / 10,
      );
      const cpuAll = cpuUsage(pids, cpuBefore, cpuAfter);
      const commitToClient = percentiles(measured.commitToClient);
      const result = {
        commit_to_client_ms: {
          p50: commitToClient.p50,
          p95: commitToClient.p95,
          p99: commitToClient.p99,
        },
        delivered_to_clients_per_s: Math.round(delivered / deliverySeconds),
        events_committed_per_s:
          writeSeconds > 0 ? Math.round(measured.commits.size / writeSeconds) : 0,
        api_rss_mib_per_1000_connections:
          Math.round((rssPer1000.reduce((a, b) => a + b, 0) / rssPer1000.length) * 10) / 10,
        clients: players,
        apis: options.apis,
        rate: options.rate,
        writers_shape_ceiling_tps: ceiling.tps,
        rate_fraction_of_writers_shape: Math.round((options.rate / ceiling.tps) * 1000) / 1000,
        seconds: options.seconds,
        node: process.version,
        timestamp: new Date().toISOString(),
        targets: {
          p99_at_most_100_ms: commitToClient.p99 <= 100,
          // The pace asked for is a fraction of this machine's ceiling; the system must keep it.
          committed_at_least_0_95_of_rate:
            writeSeconds > 0 && measured.commits.size / writeSeconds >= 0.95 * options.rate,
        },
        details: {
          committed: measured.commits.size,
          failed_transactions: measured.failed,
          deliveries_expected: expected,
          deliveries: delivered,
          drained: delivered >= expected,
          missing,
          drain_s: Math.round(Math.max(0, measured.lastDeliveryAt - measured.lastCommitAt)) / 1000,
          commit_to_client_ms: commitToClient,
          commit_to_publish_ms: percentiles(measured.commitToPublish),
          publish_to_client_ms: percentiles(measured.publishToClient),
          order_violations: orderViolations,
          resyncs,
          reconnects,
          connect_seconds: Math.round(connectSeconds * 10) / 10,
          api_rss_mib: { before_connect: rssBefore, connected: rssConnected, end: rssEnd },
          api_rss_mib_per_1000_connections: rssPer1000,
          cpu_pct: {
            apis: cpuUsage(
              apis.map((a) => a.child.pid),
              cpuBefore,
              cpuAfter,
            ).pids,
            dispatchers: cpuUsage(
              dispatchers.map((d) => d.pid),
              cpuBefore,
              cpuAfter,
            ).pids,
            postgres: cpuAll.postgres,
            redis: cpuAll.redis,
            bench: cpuAll.bench,
            other: cpuAll.other,
            machine: cpuAll.machine,
          },
          writers: options.writers,
          dispatchers: options.dispatchers,
          api_env: options.apiEnv,
          dispatcher_env: options.dispatcherEnv,
          direct: options.direct,
        },
      };
      progress(
        `${fanout}: committed ${measured.commits.size} (${result.events_committed_per_s}/s), delivered ${delivered}/${expected} to clients ` +
          `(${result.delivered_to_clients_per_s}/s); commit->client p50 ${commitToClient.p50} p99 ${commitToClient.p99} ms ` +
          `(commit->publish p99 ${result.details.commit_to_publish_ms.p99}, publish->client p99 ${result.details.publish_to_client_ms.p99}); ` +
          `cpu % of one core: apis ${result.details.cpu_pct.apis}, dispatchers ${result.details.cpu_pct.dispatchers}, ` +
          `postgres ${cpuAll.postgres}, redis ${cpuAll.redis}, bench ${cpuAll.bench}, machine ${cpuAll.machine}`,
      );
      for (const child of dispatchers) {
        const said = child
          .output()
          .split('\n')
          .filter(
            (line) =>
              line.trim() !== '' && !/^\{"level":"(log|info|debug|verbose|trace)"/.test(line),
          );
        if (said.length > 0)
          dispatchersSaid.push(`${child.name} said:\n${said.slice(-10).join('\n')}`);
      }
      await Promise.all(dispatchers.map((child) => child.stop()));
      dispatchers = [];
      return result;
    };

    const byFanout: Partial<Record<NotifyFanout, Awaited<ReturnType<typeof runPhase>>>> = {};
    for (const fanout of options.fanouts) byFanout[fanout] = await runPhase(fanout);
    const last = byFanout[options.fanouts[options.fanouts.length - 1]!]!;
    const cpuPer1000 = (part: 'apis' | 'redis') =>
      Object.fromEntries(
        Object.entries(byFanout).map(([fanout, phase]) => [
          fanout,
          phase
            ? perThousandDeliveries(
                part === 'apis' ? phase.details.cpu_pct.apis : phase.details.cpu_pct.redis,
                phase.delivered_to_clients_per_s,
              )
            : 0,
        ]),
      );
    const result = {
      ...last,
      fanout: options.fanouts[options.fanouts.length - 1],
      // CPU % of one core per 1,000 deliveries/s, all API replicas together, and Redis's.
      api_cpu_pct_per_1000_deliveries: cpuPer1000('apis'),
      redis_cpu_pct_per_1000_deliveries: cpuPer1000('redis'),
      by_fanout: byFanout,
    };
    for (const said of dispatchersSaid) progress(said);
    for (const child of apis.map((a) => a.child)) {
      const lines = child
        .output()
        .split('\n')
        .filter(
          (line) => line.trim() !== '' && !/^\{"level":"(log|info|debug|verbose|trace)"/.test(line),
        );
      if (lines.length > 0) progress(`${child.name} said:\n${lines.slice(-10).join('\n')}`);
    }
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

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (isStopping()) return;
    process.stderr.write(
      `bench:notify failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
