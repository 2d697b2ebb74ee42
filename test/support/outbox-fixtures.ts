import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Module,
  Optional,
  type DynamicModule,
  type INestApplicationContext,
  type LoggerService,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type Redis from 'ioredis';
import type { DataSource, EntityManager } from 'typeorm';
import { returnedRows } from '@matchplane/persistence';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import type { StateNotification } from '@matchplane/contracts';
import {
  createTicket,
  transitionTicket,
  type TicketChange,
  type TicketSnapshot,
  type TicketState,
} from '@matchplane/domain';
import {
  envelopesFor,
  EVENT_TYPES,
  OutboxSignal,
  OutboxWriter,
  PermanentDeliveryError,
  SubscribesTo,
  type OutboxEnvelope,
  type OutboxSubscriber,
} from '@matchplane/outbox';
import { DispatcherModule } from '../../apps/dispatcher/src/dispatcher.module';
import { createTestDatabase, type TestDatabase } from './database';
import { deliverySinkPattern } from '../dispatcher-sink/delivery-sink.module';
import { freePort, startSinkDispatcher, waitFor, waitForHttp, type RunningApp } from './processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from './redis';

/*
 * Outbox rows for the delivery suites, written the way production writes them: a transaction
 * that advances an aggregate with the optimistic `UPDATE ... WHERE revision = $n`, computes the
 * transition with libs/domain (createTicket / transitionTicket), appends its envelopes through
 * `buildEnvelope` and the OutboxWriter, and signals the relays after commit. The aggregate is a
 * small test-local table in the file's private database, so these suites do not depend on the
 * ticket store's schema; its tickets cycle SEARCHING -> MATCHED -> SEARCHING (a requeue after an
 * allocation failure) for as many revisions as a test wants.
 */

export const TEST_AGGREGATE_MODE = 'outbox-test';

/** The state a test aggregate enters at `revision`: odd revisions search, even ones are matched. */
export function testAggregateState(revision: number): TicketState {
  return revision % 2 === 1 ? 'SEARCHING' : 'MATCHED';
}

export interface WrittenEvent {
  aggregateId: string;
  revision: number;
}

interface AggregateRow {
  id: string;
  player_id: string;
  revision: string;
  state: TicketState | null;
  match_id: string | null;
  enqueued_at: Date;
}

/** Test aggregates: one `ticket.state_changed` outbox row per transition, revisions 1, 2, 3, ... */
export class TestAggregates {
  private readonly writer = new OutboxWriter();
  /** Transitions that lost the optimistic race and were re-read and retried. */
  lostRaces = 0;

  private constructor(
    private readonly dataSource: DataSource,
    private readonly signal: OutboxSignal,
  ) {}

  /** Creates the table (once per database) and a writer signalling relays under `redisKeyPrefix`. */
  static async create(
    db: TestDatabase,
    redis: Redis,
    redisKeyPrefix: string,
  ): Promise<TestAggregates> {
    const dataSource = await db.dataSource();
    await dataSource.query(
      `CREATE TABLE IF NOT EXISTS test_aggregates (
         id uuid PRIMARY KEY,
         player_id uuid NOT NULL,
         revision bigint NOT NULL CHECK (revision >= 0),
         state text,
         match_id uuid,
         enqueued_at timestamptz NOT NULL DEFAULT now())`,
    );
    const config = loadConfig(ServiceConfig, { ...db.env, REDIS_KEY_PREFIX: redisKeyPrefix });
    return new TestAggregates(dataSource, new OutboxSignal(redis, config));
  }

  /** New aggregates at revision 0 (no event yet): their first transition, revision 1, creates them. */
  async add(count = 1): Promise<string[]> {
    const ids = Array.from({ length: count }, () => randomUUID());
    await this.dataSource.query(
      `INSERT INTO test_aggregates (id, player_id, revision) SELECT id, gen_random_uuid(), 0 FROM unnest($1::uuid[]) id`,
      [ids],
    );
    return ids;
  }

  async revisionOf(id: string): Promise<number> {
    return Number((await this.load(this.dataSource.manager, id)).revision);
  }

  /**
   * One transition from `expected` (by default, the revision it reads); undefined, with nothing
   * committed, when another writer got there first. Signals the relays after commit, as every
   * production writer does.
   */
  async transition(id: string, expected?: number): Promise<WrittenEvent | undefined> {
    const written = await this.dataSource.transaction(async (manager) => {
      const current = await this.load(manager, id);
      const from = expected ?? Number(current.revision);
      if (Number(current.revision) !== from) return undefined;
      const change = nextChange(current, new Date());
      const stamped = returnedRows<{ revision: string }>(
        await manager.query(
          `UPDATE test_aggregates SET revision = revision + 1, state = $3, match_id = $4
            WHERE id = $1 AND revision = $2 RETURNING revision`,
          [id, from, change.ticket.state, change.ticket.matchId ?? null],
        ),
      )[0];
      // Lost the race between the read and the update: write nothing.
      if (!stamped || Number(stamped.revision) !== change.ticket.revision) return undefined;
      await this.writer.append(manager, envelopesFor(change.events));
      return { aggregateId: id, revision: change.ticket.revision };
    });
    if (written) this.signal.committed();
    return written;
  }

  /** One transition from whatever the revision is now, re-reading it after a lost race. */
  async advance(id: string): Promise<WrittenEvent> {
    for (;;) {
      const written = await this.transition(id);
      if (written) return written;
      this.lostRaces += 1;
    }
  }

  /** The outbox row of one revision of an aggregate. */
  async outboxIdOf(event: WrittenEvent): Promise<string> {
    const [row] = await this.dataSource.query<{ id: string }[]>(
      `SELECT id FROM outbox WHERE aggregate_id = $1 AND revision = $2`,
      [event.aggregateId, event.revision],
    );
    if (!row) throw new Error(`no outbox row for ${event.aggregateId} r${event.revision}`);
    return row.id;
  }

  /** `count` transitions of each aggregate, aggregates interleaved, one transaction each. */
  async advanceEach(ids: readonly string[], count: number): Promise<WrittenEvent[]> {
    const written: WrittenEvent[] = [];
    for (let step = 0; step < count; step += 1) {
      for (const id of ids) written.push(await this.advance(id));
    }
    return written;
  }

  /**
   * The creation of an aggregate as an older, non-validating writer would have committed it: the
   * revision stamped as usual, but the row inserted by raw SQL with a payload missing `from`, `to`,
   * `mode` and `enqueuedAt`, so it can never pass `validateEnvelope`. Later transitions go on from it.
   */
  async writePoison(id: string): Promise<WrittenEvent & { outboxId: string }> {
    const written = await this.dataSource.transaction(async (manager) => {
      const current = await this.load(manager, id);
      if (Number(current.revision) !== 0) throw new Error(`test aggregate ${id} already exists`);
      const change = nextChange(current, new Date());
      await manager.query(
        `UPDATE test_aggregates SET revision = 1, state = $2 WHERE id = $1 AND revision = 0`,
        [id, change.ticket.state],
      );
      const [row] = await manager.query<{ id: string }[]>(
        `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload)
         VALUES ('ticket.state_changed', 'ticket', $1, 1, now(), ARRAY[$2]::uuid[], jsonb_build_object('ticketId', $3::text))
         RETURNING id`,
        [id, current.player_id, id],
      );
      return { aggregateId: id, revision: 1, outboxId: row!.id };
    });
    this.signal.committed();
    return written;
  }

  private async load(manager: EntityManager, id: string): Promise<AggregateRow> {
    const [row] = await manager.query<AggregateRow[]>(
      `SELECT id, player_id, revision, state, match_id, enqueued_at FROM test_aggregates WHERE id = $1`,
      [id],
    );
    if (!row) throw new Error(`no test aggregate ${id}`);
    return row;
  }
}

/** The domain's next transition of a test aggregate: create, match, requeue, match, ... */
function nextChange(row: AggregateRow, now: Date): TicketChange {
  const revision = Number(row.revision);
  if (revision === 0 || row.state === null) {
    return createTicket(
      { id: row.id, playerId: row.player_id, mode: TEST_AGGREGATE_MODE, rating: 1500 },
      now,
    );
  }
  const ticket: TicketSnapshot = {
    id: row.id,
    playerId: row.player_id,
    mode: TEST_AGGREGATE_MODE,
    state: row.state,
    revision,
    rating: 1500,
    predictedRtt: {},
    enqueuedAt: row.enqueued_at,
    lastHeartbeatAt: now,
    stateChangedAt: now,
    ...(row.match_id === null ? {} : { matchId: row.match_id }),
  };
  return row.state === 'SEARCHING'
    ? transitionTicket(ticket, { to: 'MATCHED', matchId: randomUUID() }, now)
    : transitionTicket(
        ticket,
        {
          to: 'SEARCHING',
          failedMatch: {
            matchId: row.match_id!,
            failedFrom: 'ALLOCATING',
            reason: 'ALLOCATION_FAILED',
          },
        },
        now,
      );
}

export interface OutboxRowState {
  id: string;
  aggregate_id: string;
  revision: number;
  status: 'pending' | 'published' | 'dead';
  attempts: number;
  last_error: string | null;
  claimed_at: Date | null;
  published_at: Date | null;
  dead_lettered_at: Date | null;
}

export async function outboxRows(
  dataSource: DataSource,
  aggregateIds?: readonly string[],
): Promise<OutboxRowState[]> {
  const rows = await dataSource.query<(Omit<OutboxRowState, 'revision'> & { revision: string })[]>(
    `SELECT id, aggregate_id, revision, status, attempts, last_error, claimed_at, published_at, dead_lettered_at
       FROM outbox WHERE $1::uuid[] IS NULL OR aggregate_id = ANY($1::uuid[])
      ORDER BY aggregate_id, revision`,
    [aggregateIds ?? null],
  );
  return rows.map((row) => ({ ...row, revision: Number(row.revision) }));
}

export async function outboxRow(dataSource: DataSource, id: string): Promise<OutboxRowState> {
  const [row] = await dataSource.query<(Omit<OutboxRowState, 'revision'> & { revision: string })[]>(
    `SELECT id, aggregate_id, revision, status, attempts, last_error, claimed_at, published_at, dead_lettered_at
       FROM outbox WHERE id = $1`,
    [id],
  );
  if (!row) throw new Error(`no outbox row ${id}`);
  return { ...row, revision: Number(row.revision) };
}

export async function deliveryAttempts(
  dataSource: DataSource,
  outboxId: string,
): Promise<{ attempt: number; error: string; attempted_at: Date }[]> {
  return dataSource.query(
    `SELECT attempt, error, attempted_at FROM outbox_delivery_attempts WHERE outbox_id = $1 ORDER BY id`,
    [outboxId],
  );
}

export async function countByStatus(
  dataSource: DataSource,
): Promise<Record<'pending' | 'published' | 'dead', number>> {
  const rows = await dataSource.query<
    { status: 'pending' | 'published' | 'dead'; count: number }[]
  >(`SELECT status, count(*)::int AS count FROM outbox GROUP BY status`);
  const counts = { pending: 0, published: 0, dead: 0 };
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

// ---------------------------------------------------------------------------------------------
// In-process dispatcher with a recording subscriber

export type FailureKind = 'transient' | 'permanent';

export interface SubscriberCall {
  aggregateId: string;
  revision: number;
  outcome: 'delivered' | FailureKind;
}

export const RECORDER_SETUP = Symbol('RECORDER_SETUP');
/** Runs when Nest builds the recorder, so failures are in place before the relay's first claim. */
export type RecorderSetup = (recorder: RecordingSubscriber) => void;

/**
 * An extra `@SubscribesTo` provider beside the real subscribers: records every call (whatever
 * its event type) and can be told to fail for chosen aggregates.
 */
@Injectable()
@SubscribesTo(...EVENT_TYPES)
export class RecordingSubscriber implements OutboxSubscriber {
  readonly calls: SubscriberCall[] = [];
  private readonly failures = new Map<string, { kind: FailureKind; remaining: number }>();
  private gate?: { count: number; waiting: (() => void)[] };

  constructor(@Optional() @Inject(RECORDER_SETUP) setup?: RecorderSetup) {
    setup?.(this);
  }

  /** Fails every delivery of the aggregate (or the next `times` ones) until told otherwise. */
  failFor(
    aggregateId: string,
    kind: FailureKind = 'transient',
    times = Number.POSITIVE_INFINITY,
  ): void {
    this.failures.set(aggregateId, { kind, remaining: times });
  }

  /**
   * Holds the first `count` calls until all of them have arrived, then lets them finish together,
   * so their results reach the dispatcher at once (one settle statement).
   */
  holdFirst(count: number): void {
    this.gate = { count, waiting: [] };
  }

  async handle(envelope: OutboxEnvelope): Promise<void> {
    const gate = this.gate;
    if (gate && gate.waiting.length < gate.count) {
      await new Promise<void>((resolve) => {
        gate.waiting.push(resolve);
        if (gate.waiting.length === gate.count) gate.waiting.forEach((release) => release());
      });
    }
    return this.record(envelope);
  }

  private record(envelope: OutboxEnvelope): Promise<void> {
    const revision = Number(envelope.revision);
    const failure = this.failures.get(envelope.aggregateId);
    if (failure && failure.remaining > 0) {
      failure.remaining -= 1;
      this.calls.push({ aggregateId: envelope.aggregateId, revision, outcome: failure.kind });
      const message = `recorder refuses ${envelope.aggregateId} r${revision}`;
      return Promise.reject(
        failure.kind === 'permanent' ? new PermanentDeliveryError(message) : new Error(message),
      );
    }
    this.calls.push({ aggregateId: envelope.aggregateId, revision, outcome: 'delivered' });
    return Promise.resolve();
  }

  callsOf(aggregateId: string): SubscriberCall[] {
    return this.calls.filter((call) => call.aggregateId === aggregateId);
  }

  deliveredRevisions(aggregateId: string): number[] {
    return this.callsOf(aggregateId)
      .filter((call) => call.outcome === 'delivered')
      .map((call) => call.revision);
  }
}

@Module({})
export class RecorderModule {
  static register(setup: RecorderSetup = () => undefined): DynamicModule {
    return {
      module: RecorderModule,
      providers: [RecordingSubscriber, { provide: RECORDER_SETUP, useValue: setup }],
      exports: [RecordingSubscriber],
    };
  }
}

/** The environment of a dispatcher on this database and prefix, with a free health port. */
export async function dispatcherEnv(
  db: TestDatabase,
  redisKeyPrefix: string,
  overrides: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    ...db.env,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    HEALTH_HOST: '127.0.0.1',
    HEALTH_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

export interface InProcessDispatcher {
  app: INestApplicationContext;
  recorder: RecordingSubscriber;
  /** Every warning and error the dispatcher logged, as `Context: message`. */
  logs: string[];
  close(): Promise<void>;
}

/** Keeps the dispatcher's warnings and errors for the test to read instead of printing them. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];

  log(): void {}

  warn(message: unknown, context?: unknown): void {
    this.lines.push(`${String(context)}: ${String(message)}`);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push(`${String(rest[rest.length - 1])}: ${String(message)}`);
  }
}

/** The real DispatcherModule booted in this process, with {@link RecordingSubscriber} added. */
export async function startInProcessDispatcher(
  env: Record<string, string>,
  setup?: RecorderSetup,
): Promise<InProcessDispatcher> {
  const config = loadConfig(DispatcherConfig, env);
  const logger = new CapturingLogger();
  const app = await NestFactory.createApplicationContext(
    DispatcherModule.forRoot(config, [RecorderModule.register(setup)]),
    {
      logger,
      abortOnError: false,
    },
  );
  return {
    app,
    recorder: app.get(RecordingSubscriber),
    logs: logger.lines,
    close: () => app.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Observing the dispatcher processes' output: what their delivery sink publishes

/**
 * Subscribes to the channel the delivery sink (test/dispatcher-sink) publishes the test
 * aggregates' events on, through the Redis transport as client notifications go.
 */
export class DeliveryObserver {
  readonly received: StateNotification[] = [];

  private constructor(private readonly redis: Redis) {}

  static async start(redisKeyPrefix: string): Promise<DeliveryObserver> {
    const redis = testRedis();
    const observer = new DeliveryObserver(redis);
    redis.on('message', (_channel: string, message: string) => {
      const packet = JSON.parse(message) as { pattern: string; data: StateNotification };
      observer.received.push(packet.data);
    });
    await redis.subscribe(deliverySinkPattern(redisKeyPrefix));
    return observer;
  }

  revisionsByAggregate(): Map<string, number[]> {
    const byAggregate = new Map<string, number[]>();
    for (const notification of this.received) {
      const list = byAggregate.get(notification.aggregateId) ?? [];
      list.push(notification.revision);
      byAggregate.set(notification.aggregateId, list);
    }
    return byAggregate;
  }

  /** Resolves once every aggregate's notifications reach `revisions` distinct revisions. */
  async waitForAll(
    aggregateIds: readonly string[],
    revisions: number,
    timeoutMs: number,
  ): Promise<void> {
    await waitFor(
      () => {
        const seen = this.revisionsByAggregate();
        const done = aggregateIds.every((id) => new Set(seen.get(id)).size >= revisions);
        return Promise.resolve(done ? true : undefined);
      },
      {
        timeoutMs,
        intervalMs: 200,
        what: `${revisions} revisions of ${aggregateIds.length} aggregates`,
      },
    );
  }

  stop(): void {
    this.redis.disconnect();
  }
}

export interface OrderingReport {
  /** Redeliveries of the revision seen last (allowed: delivery is at least once). */
  duplicates: number;
  /** Anything else: a gap, an older revision after a newer one, or revisions missing at the end. */
  violations: string[];
}

/**
 * What a consumer deduping on (aggregate id, revision) sees: each aggregate's revisions must rise
 * 1, 2, 3, ... `expected` with no gap and nothing missing; the only repeat allowed is the revision
 * it saw last.
 */
export function orderingReport(
  revisionsByAggregate: ReadonlyMap<string, readonly number[]>,
  aggregateIds: readonly string[],
  expected: number,
): OrderingReport {
  let duplicates = 0;
  const violations: string[] = [];
  for (const id of aggregateIds) {
    let last = 0;
    for (const revision of revisionsByAggregate.get(id) ?? []) {
      if (revision === last) duplicates += 1;
      else if (revision === last + 1) last = revision;
      else violations.push(`${id}: r${revision} after r${last}`);
    }
    if (last !== expected) violations.push(`${id}: ended at r${last} of ${expected}`);
  }
  for (const id of revisionsByAggregate.keys()) {
    if (!aggregateIds.includes(id))
      violations.push(`${id}: notifications for an aggregate nobody wrote`);
  }
  return { duplicates, violations };
}

/**
 * Deletes every key under `prefix` in one script, so no client sees half of it gone: what a Redis
 * restart without persistence does to a deployment's keys, without touching other tests' keys
 * (FLUSHDB would). A SCAN-and-DEL loop from outside is not that: a job added between two batches
 * can keep its hash and lose its queue entry, a state no real outage produces.
 */
export async function wipeRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  const deleted = await redis.eval(
    `local cursor, deleted = '0', 0
     repeat
       local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
       cursor = page[1]
       for _, key in ipairs(page[2]) do deleted = deleted + redis.call('DEL', key) end
     until cursor == '0'
     return deleted`,
    0,
    `${prefix}*`,
  );
  return Number(deleted);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface DispatcherProcesses {
  db: TestDatabase;
  ds: DataSource;
  redis: Redis;
  observer: DeliveryObserver;
  prefix: string;
  running: RunningApp[];
  /** The health/metrics base URL of each started dispatcher, in start order. */
  baseUrls: string[];
  /**
   * Starts one real dispatcher process (with the delivery sink) on this database and prefix;
   * resolves once it is healthy.
   */
  start(overrides?: Record<string, string>): Promise<RunningApp>;
}

/**
 * The shared setup of the process-level dispatcher suites: a private database, a Redis prefix,
 * a delivery observer, and every started dispatcher killed at the end. Call inside describe().
 */
export function useDispatcherProcesses(
  options: { testPoolSize?: number } = {},
): DispatcherProcesses {
  const harness = {
    prefix: testRedisPrefix(),
    running: [] as RunningApp[],
    baseUrls: [] as string[],
  } as DispatcherProcesses;
  harness.start = async (overrides = {}) => {
    const env = await dispatcherEnv(harness.db, harness.prefix, overrides);
    const app = startSinkDispatcher(env);
    harness.running.push(app);
    const baseUrl = `http://127.0.0.1:${env.HEALTH_PORT}`;
    harness.baseUrls.push(baseUrl);
    await waitForHttp(`${baseUrl}/health`);
    return app;
  };
  beforeAll(async () => {
    harness.db = await createTestDatabase({ poolSize: options.testPoolSize });
    harness.ds = await harness.db.dataSource();
    harness.redis = testRedis();
    harness.observer = await DeliveryObserver.start(harness.prefix);
  });
  afterAll(async () => {
    await Promise.all(harness.running.map((app) => app.stop('SIGKILL')));
    harness.observer?.stop();
    harness.redis?.disconnect();
    await deleteRedisPrefix(harness.prefix);
    await harness.db?.drop();
  });
  return harness;
}

export interface OutboxTestbed {
  db: TestDatabase;
  ds: DataSource;
  redis: Redis;
  prefix: string;
  aggregates: TestAggregates;
  /**
   * The real DispatcherModule in this process, on this database and prefix, with `overrides` on
   * its environment; closed by {@link OutboxTestbed.closeDispatchers} or at the end of the file.
   */
  startDispatcher(
    overrides?: Record<string, string>,
    setup?: RecorderSetup,
  ): Promise<InProcessDispatcher>;
  /** Closes every dispatcher `startDispatcher` started and has not closed yet. */
  closeDispatchers(): Promise<void>;
}

/**
 * The shared setup of the in-process delivery suites: a private database, a Redis prefix, test
 * aggregates, and the dispatchers a test starts. Call inside describe().
 */
export function useOutboxTestbed(): OutboxTestbed {
  const running: InProcessDispatcher[] = [];
  const testbed = { prefix: testRedisPrefix() } as OutboxTestbed;
  testbed.startDispatcher = async (overrides = {}, setup) => {
    const started = await startInProcessDispatcher(
      await dispatcherEnv(testbed.db, testbed.prefix, overrides),
      setup,
    );
    const dispatcher: InProcessDispatcher = {
      ...started,
      close: async () => {
        running.splice(running.indexOf(dispatcher), 1);
        await started.close();
      },
    };
    running.push(dispatcher);
    return dispatcher;
  };
  testbed.closeDispatchers = async () => {
    while (running.length > 0) await running[running.length - 1]!.close();
  };
  beforeAll(async () => {
    testbed.db = await createTestDatabase();
    testbed.ds = await testbed.db.dataSource();
    testbed.redis = testRedis();
    testbed.aggregates = await TestAggregates.create(testbed.db, testbed.redis, testbed.prefix);
  });
  afterAll(async () => {
    await testbed.closeDispatchers();
    testbed.redis?.disconnect();
    await deleteRedisPrefix(testbed.prefix);
    await testbed.db?.drop();
  });
  return testbed;
}

/**
 * A trigger `name` that makes PostgreSQL refuse the updates of `table` matching `when` (a trigger
 * WHEN condition over OLD and NEW), as a database fault would surface. {@link removeFault} drops it.
 */
export async function installFault(
  dataSource: DataSource,
  fault: { name: string; table: string; when: string; message: string },
): Promise<void> {
  await dataSource.query(`
    CREATE FUNCTION ${fault.name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'test fault: ${fault.message.replace(/'/g, "''")}';
    END $$`);
  await dataSource.query(`
    CREATE TRIGGER ${fault.name} BEFORE UPDATE ON ${fault.table} FOR EACH ROW
      WHEN (${fault.when}) EXECUTE FUNCTION ${fault.name}()`);
}

export async function removeFault(
  dataSource: DataSource,
  name: string,
  table: string,
): Promise<void> {
  await dataSource.query(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
  await dataSource.query(`DROP FUNCTION IF EXISTS ${name}()`);
}

/** The subscribers have the event, but PostgreSQL refuses its ack. {@link allowAck} undoes it. */
export function refuseAck(dataSource: DataSource, outboxId: string): Promise<void> {
  return installFault(dataSource, {
    name: 'test_refuse_ack',
    table: 'outbox',
    when: `OLD.id = ${Number(outboxId)} AND NEW.status = 'published'`,
    message: `ack of outbox ${Number(outboxId)} refused`,
  });
}

export function allowAck(dataSource: DataSource): Promise<void> {
  return removeFault(dataSource, 'test_refuse_ack', 'outbox');
}
