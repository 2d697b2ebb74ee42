import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { DataSource, EntityManager } from 'typeorm';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { HTTP_ANSWERS, wireCodeOf } from '../../apps/api/src/http/http-answers';
import {
  DEAD_LETTER_AUDIT,
  DEAD_LETTER_REPLAY_BATCH,
  DeadLetterService,
  OutboxRepository,
  OutboxSignal,
  OutboxStatsService,
  outboxWakeChannel,
} from '@matchplane/outbox';
import { AuditWriter, encodeCursor, type AuditEntry } from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

/*
 * Dead rows are inserted by raw SQL, as an older dispatcher would have left them: the
 * dead-lettering path itself (OutboxDelivery.recordFailure) is covered by the delivery suites.
 */

interface DeadLetterSeed {
  event?: string;
  aggregateType?: string;
  aggregateId?: string;
  revision?: number;
  attempts?: number;
  lastError?: string;
  /** An SQL timestamptz literal or expression result, microseconds kept. */
  deadLetteredAt?: string;
  payload?: Record<string, unknown>;
  playerIds?: string[];
}

async function newDeadLetter(ds: DataSource, seed: DeadLetterSeed = {}): Promise<string> {
  const attempts = seed.attempts ?? 3;
  const [row] = await ds.query<{ id: string }[]>(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                         status, attempts, last_error, dead_lettered_at, created_at)
     VALUES ($1, $2, $3, $4, now() - interval '1 hour', $5::uuid[], $6::jsonb, 'dead', $7, $8,
             COALESCE($9::timestamptz, clock_timestamp()), now() - interval '1 hour')
     RETURNING id`,
    [
      seed.event ?? 'match.state_changed',
      seed.aggregateType ?? 'match',
      seed.aggregateId ?? randomUUID(),
      seed.revision ?? 1,
      seed.playerIds ?? [randomUUID(), randomUUID()],
      JSON.stringify(seed.payload ?? { state: 'ALLOCATING' }),
      attempts,
      seed.lastError ?? `Error: attempt ${attempts} failed`,
      seed.deadLetteredAt ?? null,
    ],
  );
  const id = row!.id;
  // History in the order it happened, a second apart, ending when the row was dead-lettered.
  await ds.query(
    `INSERT INTO outbox_delivery_attempts (outbox_id, attempt, error, attempted_at)
     SELECT o.id, g, 'Error: attempt ' || g || ' failed', o.dead_lettered_at - make_interval(secs => $2 - g)
       FROM outbox o, generate_series(1, $2) g WHERE o.id = $1`,
    [id, attempts],
  );
  return id;
}

async function newPending(
  ds: DataSource,
  seed: {
    aggregateId: string;
    revision: number;
    attempts?: number;
    createdSecondsAgo?: number;
    event?: string;
  },
): Promise<string> {
  const [row] = await ds.query<{ id: string }[]>(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                         attempts, last_error, created_at)
     VALUES ($1, 'match', $2, $3, now(), '{}', '{}', $4, CASE WHEN $4 > 0 THEN 'Error: still failing' END,
             now() - make_interval(secs => $5))
     RETURNING id`,
    [
      seed.event ?? 'match.state_changed',
      seed.aggregateId,
      seed.revision,
      seed.attempts ?? 0,
      seed.createdSecondsAgo ?? 0,
    ],
  );
  return row!.id;
}

async function outboxRow(ds: DataSource, id: string) {
  const [row] = await ds.query<
    {
      id: string;
      status: string;
      attempts: number;
      claimed_at: Date | null;
      next_attempt_at: Date;
      dead_lettered_at: Date | null;
      last_error: string | null;
      db_now: Date;
    }[]
  >(
    `SELECT id, status, attempts, claimed_at, next_attempt_at, dead_lettered_at, last_error, now() AS db_now FROM outbox WHERE id = $1`,
    [id],
  );
  return row;
}

async function auditRows(ds: DataSource, targetId?: string) {
  return ds.query<
    {
      actor: string;
      action: string;
      target_type: string;
      target_id: string;
      reason: string | null;
      details: Record<string, unknown>;
    }[]
  >(
    `SELECT actor, action, target_type, target_id, reason, details FROM audit_log
      WHERE $1::text IS NULL OR target_id = $1 ORDER BY id`,
    [targetId ?? null],
  );
}

/** The coded error `promise` rejects with, and the HTTP status the API answers it with. */
async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; status: number }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CodedError) {
      const { code, message } = error as CodedError;
      return { code: wireCodeOf(code), message, status: HTTP_ANSWERS[code].status };
    }
    throw error;
  }
  throw new Error('expected a CodedError');
}

class FailingAuditWriter extends AuditWriter {
  override recordMany(_manager: EntityManager, _entries: readonly AuditEntry[]): Promise<string[]> {
    return Promise.reject(new Error('audit_log is unavailable'));
  }
}

describe(`${DeadLetterService.name} and ${OutboxStatsService.name}`, () => {
  let db: TestDatabase;
  let ds: DataSource;
  let redis: Redis;
  let listener: Redis;
  let service: DeadLetterService;
  let stats: OutboxStatsService;
  let config: ServiceConfig;
  const prefix = testRedisPrefix();
  const wakeUps: string[] = [];

  const servicesWith = (audit: AuditWriter) =>
    new DeadLetterService(ds, audit, new OutboxSignal(redis, config));

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    config = loadConfig(ServiceConfig, { ...db.env, REDIS_KEY_PREFIX: prefix });
    redis = testRedis();
    listener = testRedis();
    listener.on('message', (channel: string) => wakeUps.push(channel));
    await listener.subscribe(outboxWakeChannel(prefix));
    service = servicesWith(new AuditWriter());
    stats = new OutboxStatsService(ds);
  });

  afterAll(async () => {
    listener.disconnect();
    redis.disconnect();
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  beforeEach(async () => {
    // This suite's own tables; every test starts from an empty outbox and audit trail.
    await ds.query('DELETE FROM outbox');
    await ds.query('DELETE FROM audit_log');
    wakeUps.length = 0;
  });

  describe('list', () => {
    it('lists only dead rows, oldest dead letter first, with what an operator needs to triage', async () => {
      const aggregateId = randomUUID();
      const later = await newDeadLetter(ds, {
        deadLetteredAt: '2025-03-01T10:00:02Z',
        aggregateId,
        revision: 2,
      });
      const earlier = await newDeadLetter(ds, {
        deadLetteredAt: '2025-03-01T10:00:01Z',
        aggregateId,
        revision: 1,
        attempts: 10,
        lastError: 'Error: subscriber down',
      });
      await newPending(ds, { aggregateId: randomUUID(), revision: 1 });

      const page = await service.list({});

      expect(page.nextCursor).toBeNull();
      expect(page.items.map((item) => item.id)).toEqual([earlier, later]);
      expect(page.items[0]).toEqual({
        id: earlier,
        event: 'match.state_changed',
        aggregateType: 'match',
        aggregateId,
        revision: 1,
        occurredAt: expect.any(Date) as unknown,
        attempts: 10,
        lastError: 'Error: subscriber down',
        deadLetteredAt: new Date('2025-03-01T10:00:01Z'),
      });
    });

    it('filters by event, aggregate and a [from, to) dead-lettering window, alone and together', async () => {
      const aggregateId = randomUUID();
      const a = await newDeadLetter(ds, {
        event: 'match.state_changed',
        aggregateId,
        deadLetteredAt: '2025-03-01T09:00:00Z',
      });
      const b = await newDeadLetter(ds, {
        event: 'ticket.state_changed',
        aggregateId,
        revision: 2,
        deadLetteredAt: '2025-03-01T10:00:00Z',
      });
      const c = await newDeadLetter(ds, {
        event: 'ticket.state_changed',
        deadLetteredAt: '2025-03-01T11:00:00Z',
      });
      const ids = async (filter: Parameters<DeadLetterService['list']>[0]) =>
        (await service.list(filter)).items.map((item) => item.id);

      expect(await ids({ event: 'ticket.state_changed' })).toEqual([b, c]);
      expect(await ids({ aggregateId })).toEqual([a, b]);
      expect(await ids({ from: new Date('2025-03-01T10:00:00Z') })).toEqual([b, c]);
      expect(await ids({ to: new Date('2025-03-01T10:00:00Z') })).toEqual([a]);
      expect(
        await ids({ from: new Date('2025-03-01T09:30:00Z'), to: new Date('2025-03-01T11:00:00Z') }),
      ).toEqual([b]);
      expect(await ids({ event: 'ticket.state_changed', aggregateId })).toEqual([b]);
      expect(await ids({ event: 'match.assignment_ready' })).toEqual([]);
    });

    it('walks every page exactly once, ties and microseconds within one millisecond included', async () => {
      const expected: string[] = [];
      // 4 rows share each of 3 instants; 5 more differ only in microseconds within one millisecond.
      for (const instant of [
        '2025-03-01T10:00:00.000001Z',
        '2025-03-01T10:00:00.000002Z',
        '2025-03-01T10:00:01Z',
      ]) {
        for (let n = 0; n < 4; n += 1)
          expected.push(await newDeadLetter(ds, { deadLetteredAt: instant, attempts: 1 }));
      }
      for (let micro = 100; micro < 105; micro += 1) {
        expected.push(
          await newDeadLetter(ds, {
            deadLetteredAt: `2025-03-01T10:00:02.000${micro}Z`,
            attempts: 1,
          }),
        );
      }
      await newDeadLetter(ds, {
        event: 'ticket.state_changed',
        deadLetteredAt: '2025-03-01T10:00:00.5Z',
      });

      for (const limit of [1, 3, 5, 17, 18]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await service.list({ event: 'match.state_changed' }, cursor, limit);
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(...page.items.map((item) => item.id));
          cursor = page.nextCursor ?? undefined;
          pages += 1;
        } while (cursor !== undefined && pages < 100);
        expect(seen).toEqual(expected);
        expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
      }
    });

    it.each([
      ['not base64url', '!!!!'],
      ['not JSON', Buffer.from('{"nope').toString('base64url')],
      ['the wrong shape', Buffer.from(JSON.stringify({ at: 'x', id: '1' })).toString('base64url')],
      ['a millisecond instant', encodeCursor('2025-03-01T10:00:00.000Z', '1')],
      ['an impossible date', encodeCursor('2025-02-30T10:00:00.000000Z', '1')],
      ['a non-numeric id', encodeCursor('2025-03-01T10:00:00.000000Z', '1; DROP TABLE outbox')],
      ['an id beyond int8', encodeCursor('2025-03-01T10:00:00.000000Z', '9223372036854775808')],
    ])('rejects a cursor that is %s with 400 INVALID_CURSOR', async (_what, cursor) => {
      const error = await rejection(service.list({}, cursor));
      expect(error).toMatchObject({ status: 400, code: ErrorCode.INVALID_CURSOR });
    });

    it.each([0, 501, 2.5])('rejects limit %p with 400', async (limit) => {
      expect(await rejection(service.list({}, undefined, limit))).toMatchObject({
        status: 400,
        code: ErrorCode.VALIDATION_FAILED,
      });
    });

    it('rejects a filter the database could not evaluate with 400, not a database error', async () => {
      expect(await rejection(service.list({ aggregateId: 'not-a-uuid' }))).toMatchObject({
        status: 400,
      });
      expect(await rejection(service.list({ from: new Date('nonsense') }))).toMatchObject({
        status: 400,
      });
      expect(
        await rejection(
          service.list({
            from: new Date('2025-03-02T00:00:00Z'),
            to: new Date('2025-03-01T00:00:00Z'),
          }),
        ),
      ).toMatchObject({ status: 400 });
    });
  });

  describe('show', () => {
    it('returns the whole envelope, the failure and the attempt history in order', async () => {
      const aggregateId = randomUUID();
      const playerIds = [randomUUID(), randomUUID()];
      const id = await newDeadLetter(ds, {
        aggregateId,
        revision: 7,
        attempts: 3,
        playerIds,
        payload: { state: 'FAILED', reason: 'no server' },
        lastError: 'Error: attempt 3 failed',
        deadLetteredAt: '2025-03-01T10:00:00Z',
      });

      const detail = await service.show(id);

      expect(detail).toMatchObject({
        id,
        event: 'match.state_changed',
        aggregateType: 'match',
        aggregateId,
        revision: 7,
        playerIds,
        payload: { state: 'FAILED', reason: 'no server' },
        attempts: 3,
        lastError: 'Error: attempt 3 failed',
        deadLetteredAt: new Date('2025-03-01T10:00:00Z'),
      });
      expect(detail.history).toEqual([
        {
          attempt: 1,
          error: 'Error: attempt 1 failed',
          attemptedAt: new Date('2025-03-01T09:59:58Z'),
        },
        {
          attempt: 2,
          error: 'Error: attempt 2 failed',
          attemptedAt: new Date('2025-03-01T09:59:59Z'),
        },
        {
          attempt: 3,
          error: 'Error: attempt 3 failed',
          attemptedAt: new Date('2025-03-01T10:00:00Z'),
        },
      ]);
    });

    it('answers 404 DEAD_LETTER_NOT_FOUND for an unknown id and for a row that is not dead', async () => {
      const pending = await newPending(ds, { aggregateId: randomUUID(), revision: 1 });
      for (const id of ['999999', pending]) {
        expect(await rejection(service.show(id))).toMatchObject({
          status: 404,
          code: ErrorCode.DEAD_LETTER_NOT_FOUND,
        });
      }
      expect(await rejection(service.show('abc'))).toMatchObject({ status: 400 });
    });
  });

  describe('replay', () => {
    it('puts the same row back to pending, due now, with attempts reset, audits it and wakes the relay', async () => {
      const aggregateId = randomUUID();
      const id = await newDeadLetter(ds, {
        aggregateId,
        revision: 4,
        attempts: 10,
        lastError: 'Error: boom',
      });

      const result = await service.replay(id, 'alice', '  subscriber fixed in 1.4.2 ');

      expect(result).toEqual({
        id,
        event: 'match.state_changed',
        aggregateType: 'match',
        aggregateId,
        revision: 4,
        status: 'pending',
      });
      const row = await outboxRow(ds, id);
      expect(row).toMatchObject({
        id,
        status: 'pending',
        attempts: 0,
        claimed_at: null,
        dead_lettered_at: null,
      });
      expect(row!.next_attempt_at.getTime()).toBeLessThanOrEqual(row!.db_now.getTime());
      expect(await auditRows(ds, id)).toEqual([
        {
          actor: 'alice',
          action: DEAD_LETTER_AUDIT.replayed,
          target_type: 'outbox',
          target_id: id,
          reason: 'subscriber fixed in 1.4.2',
          details: expect.objectContaining({
            event: 'match.state_changed',
            aggregateId,
            revision: 4,
            previousAttempts: 10,
            lastError: 'Error: boom',
          }) as unknown,
        },
      ]);
      await waitForWakeUp(wakeUps);
    });

    it("goes out before the aggregate's later pending events: the relay claims the replayed revision first", async () => {
      const aggregateId = randomUUID();
      const dead = await newDeadLetter(ds, { aggregateId, revision: 1 });
      await newPending(ds, { aggregateId, revision: 2 });
      await newPending(ds, { aggregateId, revision: 3 });

      await service.replay(dead, 'alice');

      const claimed = await new OutboxRepository(ds).claimHeads(
        10,
        { token: randomUUID(), owner: randomUUID() },
        { leaseMs: 60_000, ownerTimeoutMs: 1_500 },
      );
      expect(claimed.map((row) => [row.id, row.revision])).toEqual([[dead, '1']]);
    });

    it('refuses a row that is no longer dead with 409, and an unknown id with 404', async () => {
      const id = await newDeadLetter(ds);
      await service.replay(id, 'alice');
      expect(await rejection(service.replay(id, 'bob'))).toMatchObject({
        status: 409,
        code: ErrorCode.NOT_DEAD_LETTERED,
      });
      expect(await rejection(service.replay('424242', 'bob'))).toMatchObject({
        status: 404,
        code: ErrorCode.DEAD_LETTER_NOT_FOUND,
      });
      expect(await auditRows(ds)).toHaveLength(1);
    });

    it('lets exactly one of two simultaneous replays of a row win', async () => {
      const id = await newDeadLetter(ds);
      const outcomes = await Promise.allSettled([
        service.replay(id, 'alice'),
        service.replay(id, 'bob'),
      ]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(await auditRows(ds, id)).toHaveLength(1);
    });

    it('leaves the row dead when its audit row cannot be written (one transaction)', async () => {
      const id = await newDeadLetter(ds);
      await expect(servicesWith(new FailingAuditWriter()).replay(id, 'alice')).rejects.toThrow(
        'audit_log is unavailable',
      );
      expect(await outboxRow(ds, id)).toMatchObject({ status: 'dead', attempts: 3 });
    });
  });

  describe('replayMatching', () => {
    it('replays every dead letter the filter matches, each with its own audit row, and nothing else', async () => {
      const aggregateId = randomUUID();
      const matching = [
        await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 1 }),
        await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 2 }),
      ];
      const other = await newDeadLetter(ds, { event: 'match.state_changed' });

      expect(
        await service.replayMatching(
          { event: 'ticket.state_changed' },
          'alice',
          'ticket subscriber fixed',
        ),
      ).toEqual({ replayed: 2 });

      for (const id of matching)
        expect(await outboxRow(ds, id)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(await outboxRow(ds, other)).toMatchObject({ status: 'dead' });
      const audit = await auditRows(ds);
      expect(audit.map((row) => [row.target_id, row.actor, row.reason])).toEqual(
        matching.map((id) => [id, 'alice', 'ticket subscriber fixed']),
      );
      expect(audit[0]!.details).toMatchObject({
        bulk: { filter: { event: 'ticket.state_changed' } },
        previousAttempts: 3,
      });
      await waitForWakeUp(wakeUps);
    });

    it('replays everything with all: true, in batches, auditing every row', async () => {
      const count = DEAD_LETTER_REPLAY_BATCH * 2 + 7;
      await ds.query(
        `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload, status, attempts, dead_lettered_at)
         SELECT 'match.state_changed', 'match', gen_random_uuid(), 1, now(), '{}', '{}', 'dead', 1, now() - make_interval(secs => g)
           FROM generate_series(1, $1) g`,
        [count],
      );

      expect(await service.replayMatching({ all: true }, 'alice', 'outage over')).toEqual({
        replayed: count,
      });

      // Audit rows carry their transaction's now(): one distinct created_at per committed batch.
      const [left] = await ds.query<{ dead: string; audited: string; batches: string }[]>(
        `SELECT (SELECT count(*) FROM outbox WHERE status = 'dead') AS dead,
                (SELECT count(DISTINCT target_id) FROM audit_log WHERE action = $1) AS audited,
                (SELECT count(DISTINCT created_at) FROM audit_log) AS batches`,
        [DEAD_LETTER_AUDIT.replayed],
      );
      expect(left).toEqual({ dead: '0', audited: String(count), batches: '3' });
    });

    it("never splits one aggregate's dead letters across two batches, so they turn pending together", async () => {
      const insertSingles = (first: string, howMany: number) =>
        ds.query(
          `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload, status, attempts, dead_lettered_at)
           SELECT 'match.state_changed', 'match', ($1 || lpad(g::text, 12, '0'))::uuid, 1, now(), '{}', '{}', 'dead', 1, now()
             FROM generate_series(1, $2) g`,
          [first, howMany],
        );
      // Ordered by aggregate id: 498 single rows, then five revisions of one aggregate across the
      // batch size, then ten more single rows.
      await insertSingles('00000000-0000-4000-8000-', DEAD_LETTER_REPLAY_BATCH - 2);
      const straddling = '80000000-0000-4000-8000-000000000000';
      for (let revision = 1; revision <= 5; revision += 1) {
        await newDeadLetter(ds, { aggregateId: straddling, revision, attempts: 1 });
      }
      await insertSingles('f0000000-0000-4000-8000-', 10);

      expect(await service.replayMatching({ all: true }, 'alice', 'outage over')).toEqual({
        replayed: DEAD_LETTER_REPLAY_BATCH + 13,
      });

      const batches = await ds.query<{ created_at: Date; rows: string; straddling: string }[]>(
        `SELECT created_at, count(*) AS rows, count(*) FILTER (WHERE details->>'aggregateId' = $1) AS straddling
           FROM audit_log GROUP BY created_at ORDER BY created_at`,
        [straddling],
      );
      expect(batches.map((batch) => [batch.rows, batch.straddling])).toEqual([
        [String(DEAD_LETTER_REPLAY_BATCH + 3), '5'],
        ['10', '0'],
      ]);
    });

    it.each([
      ['an empty filter without all', {}],
      ['all: false and no filter', { all: false }],
      ['all together with a filter', { all: true, event: 'match.state_changed' }],
    ])('refuses %s with 400 and replays nothing', async (_what, selection) => {
      const id = await newDeadLetter(ds);
      expect(await rejection(service.replayMatching(selection, 'alice', 'because'))).toMatchObject({
        status: 400,
        code: ErrorCode.VALIDATION_FAILED,
      });
      expect(await outboxRow(ds, id)).toMatchObject({ status: 'dead' });
    });

    it('requires a reason', async () => {
      await newDeadLetter(ds);
      expect(await rejection(service.replayMatching({ all: true }, 'alice', '   '))).toMatchObject({
        status: 400,
      });
    });
  });

  describe('discard', () => {
    it('deletes the row and its attempt history, and the audit row keeps the full envelope', async () => {
      const aggregateId = randomUUID();
      const playerIds = [randomUUID()];
      const id = await newDeadLetter(ds, {
        aggregateId,
        revision: 3,
        attempts: 2,
        playerIds,
        payload: { state: 'CANCELLED' },
        deadLetteredAt: '2025-03-01T10:00:00Z',
      });

      expect(await service.discard(id, 'alice', 'duplicate of a later revision')).toEqual({
        id,
        event: 'match.state_changed',
        aggregateType: 'match',
        aggregateId,
        revision: 3,
        discarded: true,
      });

      expect(await outboxRow(ds, id)).toBeUndefined();
      expect(
        await ds.query(`SELECT 1 FROM outbox_delivery_attempts WHERE outbox_id = $1`, [id]),
      ).toEqual([]);
      const [audit] = await auditRows(ds, id);
      expect(audit).toMatchObject({
        actor: 'alice',
        action: DEAD_LETTER_AUDIT.discarded,
        reason: 'duplicate of a later revision',
      });
      expect(audit!.details).toMatchObject({
        envelope: {
          event: 'match.state_changed',
          aggregateType: 'match',
          aggregateId,
          revision: 3,
          occurredAt: expect.any(String) as unknown,
          playerIds,
          payload: { state: 'CANCELLED' },
        },
        attempts: 2,
        lastError: 'Error: attempt 2 failed',
        deadLetteredAt: '2025-03-01T10:00:00.000Z',
        history: [
          { attempt: 1, error: 'Error: attempt 1 failed', attemptedAt: '2025-03-01T09:59:59.000Z' },
          { attempt: 2, error: 'Error: attempt 2 failed', attemptedAt: '2025-03-01T10:00:00.000Z' },
        ],
      });
    });

    it('requires a reason, and refuses rows that are not dead', async () => {
      const id = await newDeadLetter(ds);
      expect(await rejection(service.discard(id, 'alice', ''))).toMatchObject({ status: 400 });
      const pending = await newPending(ds, { aggregateId: randomUUID(), revision: 1 });
      expect(await rejection(service.discard(pending, 'alice', 'x'))).toMatchObject({
        status: 409,
        code: ErrorCode.NOT_DEAD_LETTERED,
      });
      expect(await rejection(service.discard('31337', 'alice', 'x'))).toMatchObject({
        status: 404,
      });
      expect(await outboxRow(ds, id)).toMatchObject({ status: 'dead' });
      expect(await outboxRow(ds, pending)).toMatchObject({ status: 'pending' });
      expect(await auditRows(ds)).toEqual([]);
    });

    it('keeps the row when its audit row cannot be written (one transaction)', async () => {
      const id = await newDeadLetter(ds);
      await expect(
        servicesWith(new FailingAuditWriter()).discard(id, 'alice', 'x'),
      ).rejects.toThrow('audit_log is unavailable');
      expect(await outboxRow(ds, id)).toMatchObject({ status: 'dead' });
    });
  });

  describe(OutboxStatsService.name, () => {
    it('reports the backlog, dead letters by event and the aggregates blocked behind a failing head', async () => {
      const blockedDeep = randomUUID();
      const blockedShallow = randomUUID();
      const healthy = randomUUID();
      await newPending(ds, {
        aggregateId: blockedDeep,
        revision: 1,
        attempts: 2,
        createdSecondsAgo: 90,
      });
      for (const revision of [2, 3, 4])
        await newPending(ds, { aggregateId: blockedDeep, revision });
      await newPending(ds, { aggregateId: blockedShallow, revision: 5, attempts: 1 });
      await newPending(ds, { aggregateId: healthy, revision: 1 });
      await newPending(ds, { aggregateId: healthy, revision: 2 });
      await newDeadLetter(ds, { event: 'ticket.state_changed' });
      await newDeadLetter(ds, { event: 'ticket.state_changed' });
      await newDeadLetter(ds, { event: 'match.state_changed' });

      const result = await stats.stats();

      expect(result.pending.count).toBe(7);
      expect(result.pending.oldestAgeSeconds).toBeGreaterThanOrEqual(90);
      expect(result.pending.oldestAgeSeconds).toBeLessThan(120);
      expect(result.deadLetters).toEqual({
        count: 3,
        byEvent: [
          { event: 'ticket.state_changed', count: 2 },
          { event: 'match.state_changed', count: 1 },
        ],
      });
      expect(result.blockedAggregates.count).toBe(2);
      expect(result.blockedAggregates.waitingBehind).toBe(3);
      expect(result.blockedAggregates.top).toEqual([
        expect.objectContaining({
          aggregateId: blockedDeep,
          headRevision: 1,
          attempts: 2,
          waiting: 3,
          lastError: 'Error: still failing',
        }),
        expect.objectContaining({
          aggregateId: blockedShallow,
          headRevision: 5,
          attempts: 1,
          waiting: 0,
        }),
      ]);
    });

    it('names at most 20 blocked aggregates but counts them all', async () => {
      for (let n = 0; n < 25; n += 1) {
        const aggregateId = randomUUID();
        await newPending(ds, { aggregateId, revision: 1, attempts: 1 });
        for (let behind = 0; behind < n % 3; behind += 1)
          await newPending(ds, { aggregateId, revision: 2 + behind });
      }

      const { blockedAggregates } = await stats.stats();

      expect(blockedAggregates.count).toBe(25);
      expect(blockedAggregates.top).toHaveLength(20);
      expect(blockedAggregates.waitingBehind).toBe(
        Array.from({ length: 25 }, (_, n) => n % 3).reduce((a, b) => a + b, 0),
      );
      const waiting = blockedAggregates.top.map((row) => row.waiting);
      expect(waiting).toEqual([...waiting].sort((a, b) => b - a));
    });

    it('reports an empty outbox as zeros and no oldest age', async () => {
      expect(await stats.stats()).toEqual({
        pending: { count: 0, oldestAgeSeconds: null },
        deadLetters: { count: 0, byEvent: [] },
        blockedAggregates: { count: 0, waitingBehind: 0, top: [] },
      });
    });
  });
});

async function waitForWakeUp(wakeUps: string[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (wakeUps.length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(wakeUps.length).toBeGreaterThan(0);
}
