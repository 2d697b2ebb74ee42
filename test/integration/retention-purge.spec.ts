import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { dataSourceOptions } from '@matchplane/persistence';
import {
  RETENTION_POLICY_NAMES,
  retentionPolicy,
  type RetentionPolicyName,
} from '../../apps/maintenance/src/retention/retention-policy';
import {
  RetentionPurger,
  type RetentionPassReport,
  type RetentionPurgerOptions,
} from '../../apps/maintenance/src/retention/retention.purger';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { waitFor } from '../support/processes';

/*
 * Rows are seeded by SQL at controlled instants and every pass runs at a fixed `now`: these tests
 * are about which rows the purge deletes, not about the paths that write them.
 */

const NOW = new Date('2026-06-01T12:00:00.000Z');
const SECOND = 1_000;
const HOUR = 3_600 * SECOND;
const DAY = 24 * HOUR;

const config = loadConfig(MaintenanceConfig, {});
const windowMs = (policy: RetentionPolicyName) => config[retentionPolicy(policy).window] * SECOND;
const ago = (ms: number, from = NOW) => new Date(from.getTime() - ms);

function purgerOptions(overrides: Partial<RetentionPurgerOptions> = {}): RetentionPurgerOptions {
  return {
    windows: config,
    batchSize: 1_000,
    passBudgetMs: 60_000,
    batchPauseMs: 0,
    pressurePauseMs: 0,
    pressureLockWaiters: 10_000,
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// Factories

async function newPlayer(ds: DataSource): Promise<string> {
  const [row] = await ds.query<{ id: string }[]>(`INSERT INTO players DEFAULT VALUES RETURNING id`);
  return row!.id;
}

async function newIdempotencyKey(
  ds: DataSource,
  playerId: string,
  createdAt: Date,
): Promise<string> {
  const key = randomUUID();
  await ds.query(
    `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, response_status, response_body,
                                   created_at, completed_at)
     VALUES ($1, $2, $3, 'POST /v1/tickets', 'completed', 201, '{}', $4, $4)`,
    [playerId, key, randomBytes(32), createdAt],
  );
  return key;
}

async function newOutboxRow(
  ds: DataSource,
  row: { status: 'pending' | 'published' | 'dead'; at?: Date; createdAt: Date },
): Promise<string> {
  const [inserted] = await ds.query<{ id: string }[]>(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                         status, published_at, dead_lettered_at, attempts, created_at)
     VALUES ('match.state_changed', 'match', $1, 1, $2, ARRAY[$3]::uuid[], '{}', $4,
             CASE WHEN $4 = 'published' THEN $5::timestamptz END,
             CASE WHEN $4 = 'dead' THEN $5::timestamptz END,
             CASE WHEN $4 = 'dead' THEN 10 ELSE 0 END, $2)
     RETURNING id`,
    [randomUUID(), row.createdAt, randomUUID(), row.status, row.at ?? null],
  );
  if (row.status === 'dead') {
    await ds.query(
      `INSERT INTO outbox_delivery_attempts (outbox_id, attempt, error, attempted_at) VALUES ($1, 10, 'Error: down', $2)`,
      [inserted!.id, row.at],
    );
  }
  return inserted!.id;
}

async function newSession(
  ds: DataSource,
  playerId: string,
  times: { expiresAt: Date; revokedAt?: Date },
): Promise<string> {
  const [row] = await ds.query<{ id: string }[]>(
    `INSERT INTO sessions (player_id, token_hash, created_at, expires_at, revoked_at)
     VALUES ($1, $2, $3::timestamptz - interval '1 day', $3, $4) RETURNING id`,
    [playerId, randomBytes(32), times.expiresAt, times.revokedAt ?? null],
  );
  return row!.id;
}

async function newProbeChallenge(
  ds: DataSource,
  playerId: string,
  expiresAt: Date,
  answered: boolean,
): Promise<string> {
  const [row] = await ds.query<{ id: string }[]>(
    `INSERT INTO probe_challenges (player_id, region, nonce_hash, issued_at, expires_at, answered_at, rtt_ms)
     VALUES ($1, 'eu-west', $2, $3::timestamptz - interval '5 seconds', $3,
             CASE WHEN $4 THEN $3::timestamptz - interval '4 seconds' END, CASE WHEN $4 THEN 42 END)
     RETURNING id`,
    [playerId, randomBytes(32), expiresAt, answered],
  );
  return row!.id;
}

type TicketState = 'COMPLETED' | 'CANCELLED' | 'EXPIRED' | 'FAILED';

async function newFinishedTicket(
  ds: DataSource,
  playerId: string,
  finishedAt: Date,
  options: { state?: TicketState; matchId?: string } = {},
): Promise<string> {
  const [row] = await ds.query<{ id: string }[]>(
    `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, match_id,
                                created_at, finished_at)
     VALUES ($1, 'duel', $2, 1500, $3::timestamptz - interval '10 minutes', $3::timestamptz - interval '5 minutes',
             $4, $3::timestamptz - interval '10 minutes', $3)
     RETURNING id`,
    [playerId, options.state ?? 'CANCELLED', finishedAt, options.matchId ?? null],
  );
  return row!.id;
}

type AllocationState = 'REQUESTED' | 'ALLOCATED' | 'RELEASED' | 'FAILED';

interface SeededMatch {
  matchId: string;
  ticketIds: string[];
}

/**
 * A finished match with everything hanging off it: two participants with their (finished)
 * tickets and assignments, an allocation and a signed roster.
 */
async function newFinishedMatch(
  ds: DataSource,
  finishedAt: Date,
  options: { allocation?: AllocationState; ticketsFinishedAt?: Date } = {},
): Promise<SeededMatch> {
  const [match] = await ds.query<{ id: string }[]>(
    `INSERT INTO matches (mode, region, state, revision, created_at, state_changed_at, finished_at)
     VALUES ('duel', 'eu-west', 'COMPLETED', 5, $1::timestamptz - interval '30 minutes', $1, $1) RETURNING id`,
    [finishedAt],
  );
  const matchId = match!.id;
  const serverId = `server-${randomUUID()}`;
  const ticketIds: string[] = [];
  for (const team of [0, 1]) {
    const playerId = await newPlayer(ds);
    const ticketId = await newFinishedTicket(
      ds,
      playerId,
      options.ticketsFinishedAt ?? finishedAt,
      {
        state: 'COMPLETED',
        matchId,
      },
    );
    ticketIds.push(ticketId);
    await ds.query(
      `INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match, connected_at)
       VALUES ($1, $2, $3, $4, 1500, $5::timestamptz - interval '20 minutes')`,
      [matchId, playerId, ticketId, team, finishedAt],
    );
    await ds.query(
      `INSERT INTO assignments (match_id, player_id, server_id, endpoint, join_token, key_id, issued_at, expires_at)
       VALUES ($1, $2, $3, '127.0.0.1:7777', 'token', 'k1', $4::timestamptz - interval '25 minutes',
               $4::timestamptz - interval '20 minutes')`,
      [matchId, playerId, serverId, finishedAt],
    );
  }
  const allocation = options.allocation ?? 'RELEASED';
  await ds.query(
    `INSERT INTO allocations (match_id, provider, server_id, endpoint, state, released_at)
     VALUES ($1, 'local', $2, '127.0.0.1:7777', $3, CASE WHEN $3 = 'RELEASED' THEN $4::timestamptz END)`,
    [matchId, serverId, allocation, finishedAt],
  );
  await ds.query(
    `INSERT INTO roster_manifests (match_id, server_id, entry_count, digest, key_id, signature, published_at)
     VALUES ($1, $2, 2, $3, 'k1', $4, $5::timestamptz - interval '25 minutes')`,
    [matchId, serverId, randomBytes(32), randomBytes(32), finishedAt],
  );
  return { matchId, ticketIds };
}

async function count(ds: DataSource, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await ds.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return row!.n;
}

const present = (ds: DataSource, table: string, column: string, values: string[]) =>
  count(ds, `${table} WHERE ${column}::text = ANY($1::text[])`, [values]);

// ---------------------------------------------------------------------------------------------

/** Seeds rows whose window column is `at`; returns how many of them are still there. */
type BoundarySeed = (ds: DataSource, at: Date) => Promise<() => Promise<number>>;

const BOUNDARY_SEEDS: Record<RetentionPolicyName, BoundarySeed> = {
  outbox_dead_letters: async (ds, at) => {
    const id = await newOutboxRow(ds, { status: 'dead', at, createdAt: ago(HOUR, at) });
    return () => present(ds, 'outbox', 'id', [id]);
  },
  outbox_published: async (ds, at) => {
    const id = await newOutboxRow(ds, { status: 'published', at, createdAt: ago(SECOND, at) });
    return () => present(ds, 'outbox', 'id', [id]);
  },
  idempotency_keys: async (ds, at) => {
    const key = await newIdempotencyKey(ds, await newPlayer(ds), at);
    return () => present(ds, 'idempotency_keys', 'key', [key]);
  },
  sessions_expired: async (ds, at) => {
    const id = await newSession(ds, await newPlayer(ds), { expiresAt: at });
    return () => present(ds, 'sessions', 'id', [id]);
  },
  sessions_revoked: async (ds, at) => {
    // Revoked long before it would have expired: revocation alone starts the window.
    const id = await newSession(ds, await newPlayer(ds), {
      expiresAt: new Date(NOW.getTime() + DAY),
      revokedAt: at,
    });
    return () => present(ds, 'sessions', 'id', [id]);
  },
  probe_challenges: async (ds, at) => {
    const playerId = await newPlayer(ds);
    const ids = [
      await newProbeChallenge(ds, playerId, at, true),
      await newProbeChallenge(ds, playerId, at, false),
    ];
    return () => present(ds, 'probe_challenges', 'id', ids);
  },
  matches: async (ds, at) => {
    // Its tickets finished recently, so only the match is past a window.
    const { matchId } = await newFinishedMatch(ds, at, { ticketsFinishedAt: ago(HOUR) });
    return () => present(ds, 'matches', 'id', [matchId]);
  },
  queue_tickets: async (ds, at) => {
    const id = await newFinishedTicket(ds, await newPlayer(ds), at, { state: 'EXPIRED' });
    return () => present(ds, 'queue_tickets', 'id', [id]);
  },
};

describe(RetentionPurger.name, () => {
  let db: TestDatabase;
  let ds: DataSource;
  let purger: RetentionPurger;

  async function freshDatabase(options: Partial<RetentionPurgerOptions> = {}): Promise<void> {
    await db?.drop();
    db = await createTestDatabase();
    ds = await db.dataSource();
    purger = new RetentionPurger(ds, purgerOptions(options));
  }

  afterAll(async () => {
    await db?.drop();
  });

  describe('window boundaries', () => {
    beforeEach(() => freshDatabase());

    it.each(RETENTION_POLICY_NAMES)(
      '%s: keeps a row one second inside its window and purges one second past it',
      async (policy) => {
        const cutoff = ago(windowMs(policy));
        const seed = BOUNDARY_SEEDS[policy];
        const inside = await seed(ds, new Date(cutoff.getTime() + SECOND));
        const past = await seed(ds, new Date(cutoff.getTime() - SECOND));
        const rows = await inside();

        const report = await purger.pass({ now: NOW });

        expect(report.errors).toEqual([]);
        expect(report.outcome).toBe('complete');
        expect(await inside()).toBe(rows);
        expect(await past()).toBe(0);
        expect(report.purged).toEqual({ ...zeroes(), [policy]: rows });
        expect(report.lagSeconds).toEqual(zeroes());
      },
    );

    it('reports as lag how long ago the oldest deletable row passed its window', async () => {
      // A pass that ran out of budget at once (0 ms) deletes nothing and still measures.
      purger = new RetentionPurger(ds, purgerOptions({ passBudgetMs: 0 }));
      await BOUNDARY_SEEDS.queue_tickets(ds, ago(windowMs('queue_tickets') + 90 * SECOND));

      const report = await purger.pass({ now: NOW });

      expect(report.outcome).toBe('budget_exhausted');
      expect(report.purged.queue_tickets).toBe(0);
      expect(report.lagSeconds?.queue_tickets).toBeCloseTo(90, 3);
    });

    it('deletes a match with its participants, assignments, allocation and roster, and unlinks its tickets', async () => {
      const past = await newFinishedMatch(ds, ago(windowMs('matches') + SECOND), {
        ticketsFinishedAt: ago(HOUR),
      });
      const kept = await newFinishedMatch(ds, ago(windowMs('matches') - SECOND), {
        ticketsFinishedAt: ago(HOUR),
      });

      await purger.pass({ now: NOW });

      for (const table of [
        'matches',
        'match_participants',
        'assignments',
        'allocations',
        'roster_manifests',
      ]) {
        const column = table === 'matches' ? 'id' : 'match_id';
        expect([table, await present(ds, table, column, [past.matchId])]).toEqual([table, 0]);
        expect([table, await present(ds, table, column, [kept.matchId])]).toEqual([
          table,
          table === 'match_participants' || table === 'assignments' ? 2 : 1,
        ]);
      }
      expect(
        await count(ds, `queue_tickets WHERE id = ANY($1::uuid[]) AND match_id IS NULL`, [
          past.ticketIds,
        ]),
      ).toBe(2);
    });

    it('keeps a finished match whose allocation is still live (its server unreleased)', async () => {
      const finishedAt = ago(windowMs('matches') + DAY);
      const live = await Promise.all(
        (['REQUESTED', 'ALLOCATED'] as const).map((allocation) =>
          newFinishedMatch(ds, finishedAt, { allocation, ticketsFinishedAt: ago(HOUR) }),
        ),
      );
      const done = await Promise.all(
        (['RELEASED', 'FAILED'] as const).map((allocation) =>
          newFinishedMatch(ds, finishedAt, { allocation, ticketsFinishedAt: ago(HOUR) }),
        ),
      );

      const report = await purger.pass({ now: NOW });

      expect(report.purged.matches).toBe(2);
      expect(
        await present(
          ds,
          'matches',
          'id',
          live.map((m) => m.matchId),
        ),
      ).toBe(2);
      expect(
        await present(
          ds,
          'matches',
          'id',
          done.map((m) => m.matchId),
        ),
      ).toBe(0);
      expect(report.lagSeconds?.matches).toBe(0);
    });

    it('keeps a ticket past its window while a retained match lists it, and purges it with that match', async () => {
      const match = await newFinishedMatch(ds, ago(DAY), {
        ticketsFinishedAt: ago(windowMs('queue_tickets') + DAY),
      });

      const first = await purger.pass({ now: NOW });

      expect(first.errors).toEqual([]);
      expect(await present(ds, 'queue_tickets', 'id', match.ticketIds)).toBe(2);
      expect(first.lagSeconds?.queue_tickets).toBe(0);

      // Once the match is past its window too, one pass deletes the match and then its tickets.
      const later = new Date(NOW.getTime() + windowMs('matches'));
      const second = await purger.pass({ now: later });

      expect(second.errors).toEqual([]);
      expect(second.purged).toMatchObject({ matches: 1, queue_tickets: 2 });
      expect(await present(ds, 'queue_tickets', 'id', match.ticketIds)).toBe(0);
    });
  });

  describe('idempotency keys and dead letters', () => {
    beforeEach(() => freshDatabase());

    it('keeps every key younger than the oldest dead letter minus the margin, whatever the window says', async () => {
      const margin = config.RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS * SECOND;
      const deadCreatedAt = ago(10 * DAY);
      await newOutboxRow(ds, { status: 'dead', at: ago(9 * DAY), createdAt: deadCreatedAt });
      const playerId = await newPlayer(ds);
      const guardCutoff = ago(margin, deadCreatedAt);
      const olderThanGuard = await newIdempotencyKey(ds, playerId, ago(SECOND, guardCutoff));
      const youngerThanGuard = await newIdempotencyKey(
        ds,
        playerId,
        new Date(guardCutoff.getTime() + SECOND),
      );
      const pastWindowOnly = await newIdempotencyKey(
        ds,
        playerId,
        ago(windowMs('idempotency_keys') + HOUR),
      );
      const insideWindow = await newIdempotencyKey(ds, playerId, ago(HOUR));

      const report = await purger.pass({ now: NOW });

      expect(report.purged.idempotency_keys).toBe(1);
      expect(await present(ds, 'idempotency_keys', 'key', [olderThanGuard])).toBe(0);
      expect(
        await present(ds, 'idempotency_keys', 'key', [
          youngerThanGuard,
          pastWindowOnly,
          insideWindow,
        ]),
      ).toBe(3);
      // The window cutoff (now - 48 h) minus the guard's (the dead letter's created_at - 1 h).
      const expectedHold =
        (ago(windowMs('idempotency_keys')).getTime() - guardCutoff.getTime()) / SECOND;
      expect(report.idempotencyHoldSeconds).toBeCloseTo(expectedHold, 3);
      // Held keys are not deletable, so they are not deletion lag.
      expect(report.lagSeconds?.idempotency_keys).toBe(0);
    });

    it('purges the held keys once the dead letter is gone', async () => {
      const deadId = await newOutboxRow(ds, {
        status: 'dead',
        at: ago(4 * DAY),
        createdAt: ago(5 * DAY),
      });
      const key = await newIdempotencyKey(ds, await newPlayer(ds), ago(3 * DAY));

      expect((await purger.pass({ now: NOW })).purged.idempotency_keys).toBe(0);
      await ds.query(`DELETE FROM outbox WHERE id = $1`, [deadId]); // an operator's discard
      const report = await purger.pass({ now: NOW });

      expect(report.purged.idempotency_keys).toBe(1);
      expect(report.idempotencyHoldSeconds).toBe(0);
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });

    it('lets a dead letter leaving its own window release the keys in the same pass', async () => {
      const deadAt = ago(windowMs('outbox_dead_letters') + SECOND);
      await newOutboxRow(ds, { status: 'dead', at: deadAt, createdAt: ago(HOUR, deadAt) });
      const key = await newIdempotencyKey(ds, await newPlayer(ds), ago(3 * DAY));

      const report = await purger.pass({ now: NOW });

      expect(report.purged).toMatchObject({ outbox_dead_letters: 1, idempotency_keys: 1 });
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });

    it('is not held back by published or pending rows', async () => {
      await newOutboxRow(ds, { status: 'published', at: ago(5 * DAY), createdAt: ago(5 * DAY) });
      await newOutboxRow(ds, { status: 'pending', createdAt: ago(5 * DAY) });
      const key = await newIdempotencyKey(ds, await newPlayer(ds), ago(3 * DAY));

      const report = await purger.pass({ now: NOW });

      expect(report.purged.idempotency_keys).toBe(1);
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });
  });

  describe('batches', () => {
    beforeAll(() => freshDatabase());

    it('stops a pass when its budget is spent and goes on in the next', async () => {
      const total = 20_000;
      await seedIdempotencyBacklog(ds, total, ago(3 * DAY));
      const budgeted = new RetentionPurger(
        ds,
        purgerOptions({ batchSize: 100, passBudgetMs: 300, batchPauseMs: 5, pressurePauseMs: 5 }),
      );

      const first = await budgeted.pass({ now: NOW });

      expect(first.outcome).toBe('budget_exhausted');
      expect(first.purged.idempotency_keys).toBeGreaterThan(0);
      expect(first.purged.idempotency_keys).toBeLessThan(total);
      // The budget bounds when the last batch starts; that batch and the lag queries follow it.
      expect(first.durationMs).toBeLessThan(300 + 1_000);
      expect(first.lagSeconds?.idempotency_keys).toBeGreaterThan(0);
      expect(await count(ds, `idempotency_keys`)).toBe(total - first.purged.idempotency_keys);

      const reports: RetentionPassReport[] = [first];
      while (reports[reports.length - 1]!.outcome !== 'complete') {
        reports.push(await budgeted.pass({ now: NOW }));
        expect(reports.length).toBeLessThan(200);
      }
      expect(reports[1]!.purged.idempotency_keys).toBeGreaterThan(0);
      expect(reports.reduce((sum, report) => sum + report.purged.idempotency_keys, 0)).toBe(total);
      expect(await count(ds, `idempotency_keys`)).toBe(0);
      expect(reports[reports.length - 1]!.lagSeconds?.idempotency_keys).toBe(0);
    });

    it('takes the policies in turn, so one backlog does not starve the others', async () => {
      await seedIdempotencyBacklog(ds, 20_000, ago(3 * DAY));
      const ticket = await newFinishedTicket(ds, await newPlayer(ds), ago(30 * DAY));
      const budgeted = new RetentionPurger(ds, purgerOptions({ batchSize: 20, passBudgetMs: 200 }));

      const report = await budgeted.pass({ now: NOW });

      expect(report.outcome).toBe('budget_exhausted');
      expect(report.purged.queue_tickets).toBe(1);
      expect(await present(ds, 'queue_tickets', 'id', [ticket])).toBe(0);
      await ds.query(`DELETE FROM idempotency_keys`);
    });

    it('stops before its next batch when aborted', async () => {
      await seedIdempotencyBacklog(ds, 2_000, ago(3 * DAY));
      const slow = new RetentionPurger(
        ds,
        purgerOptions({ batchSize: 100, batchPauseMs: 60_000, pressurePauseMs: 60_000 }),
      );
      const stop = new AbortController();

      const pass = slow.pass({ now: NOW, signal: stop.signal });
      await waitFor(async () => ((await count(ds, 'idempotency_keys')) < 2_000 ? true : undefined));
      stop.abort();
      const report = await pass;

      expect(report.outcome).toBe('interrupted');
      expect(report.purged.idempotency_keys).toBe(100);
      expect(report.lagSeconds).toBeUndefined();
      await ds.query(`DELETE FROM idempotency_keys`);
    });
  });

  describe('database pressure', () => {
    beforeAll(() => freshDatabase());

    it('slows down while sessions of the database wait on locks', async () => {
      const holder = await connect(db);
      const waiters = await Promise.all([1, 2, 3].map(() => connect(db)));
      try {
        // A session holds a lock three others queue behind: what a contended hot row looks like.
        await holder.query(`BEGIN`);
        await holder.query(`LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE`);
        const blocked = waiters.map((waiter) =>
          waiter.query(`SELECT count(*) FROM audit_log`).catch(() => undefined),
        );
        const pressured = new RetentionPurger(
          ds,
          purgerOptions({ batchSize: 10, pressureLockWaiters: 3, pressurePauseMs: 400 }),
        );
        await waitFor(async () =>
          (await pressured.pressure('sessions')).lockWaiters >= 3 ? true : undefined,
        );
        const playerId = await newPlayer(ds);
        for (let i = 0; i < 25; i += 1)
          await newSession(ds, playerId, { expiresAt: ago(30 * DAY) });

        const report = await pressured.pass({ now: NOW });

        expect(await pressured.pressure('sessions')).toMatchObject({ underPressure: true });
        expect(report.purged.sessions_expired).toBe(25);
        // Three batches (10, 10, 5) with the longer pause after each of the first two.
        expect(report.pressuredBatches).toBeGreaterThanOrEqual(2);
        expect(report.durationMs).toBeGreaterThanOrEqual(800);

        await holder.query(`COMMIT`);
        await Promise.all(blocked);
        expect(await pressured.pressure('sessions')).toMatchObject({ lockWaiters: 0 });
      } finally {
        await Promise.all([holder, ...waiters].map((client) => client.end()));
      }
    });

    it('counts a table as under pressure when autovacuum is far behind on it', async () => {
      const probe = new RetentionPurger(ds, purgerOptions());
      await ds.query(`ALTER TABLE probe_challenges SET (autovacuum_enabled = false)`);
      const playerId = await newPlayer(ds);
      await ds.query(
        `INSERT INTO probe_challenges (player_id, region, nonce_hash, issued_at, expires_at)
         SELECT $1, 'eu-west', '\\x00', now(), now() FROM generate_series(1, 1000)`,
        [playerId],
      );
      expect(await probe.pressure('probe_challenges')).toMatchObject({ vacuumBehind: false });

      // A never-vacuumed table triggers autovacuum at 50 dead tuples: 1000 is far past twice that.
      const runner = ds.createQueryRunner();
      try {
        await runner.query(`DELETE FROM probe_challenges`);
        await runner.query(`SELECT pg_stat_force_next_flush()`);
        await runner.query(`SELECT 1`);
      } finally {
        await runner.release();
      }
      await waitFor(async () =>
        (await probe.pressure('probe_challenges')).vacuumBehind ? true : undefined,
      );
      expect(await probe.pressure('probe_challenges')).toMatchObject({ underPressure: true });
      await ds.query(`VACUUM probe_challenges`);
      await waitFor(async () =>
        (await probe.pressure('probe_challenges')).vacuumBehind ? undefined : true,
      );
    });
  });

  describe('two replicas', () => {
    let other: DataSource;

    beforeAll(async () => {
      await freshDatabase();
      other = new DataSource(dataSourceOptions(db.config));
      await other.initialize();
    });

    afterAll(async () => {
      if (other?.isInitialized) await other.destroy();
    });

    it('delete every eligible row exactly once between them, their counts adding up, without errors', async () => {
      const eligible = await seedMixedBacklog(ds, 3_000);
      const before = await tableCounts(ds);
      const options = purgerOptions({ batchSize: 50 });
      const replicas = [new RetentionPurger(ds, options), new RetentionPurger(other, options)];

      // A ticket whose match the other replica is deleting at that moment waits for a later batch,
      // possibly the next pass; a second concurrent round picks up whatever the first left.
      const reports: RetentionPassReport[] = [];
      for (let round = 0; round < 2; round += 1) {
        reports.push(...(await Promise.all(replicas.map((replica) => replica.pass({ now: NOW })))));
      }

      for (const report of reports) {
        expect(report.errors).toEqual([]);
        expect(report.outcome).toBe('complete');
      }
      const purgedTogether = zeroes();
      for (const name of RETENTION_POLICY_NAMES) {
        purgedTogether[name] = reports.reduce((sum, report) => sum + report.purged[name], 0);
      }
      expect(purgedTogether).toEqual(eligible);
      // Both took part: batches of 50 over thousands of rows interleave.
      for (const report of reports.slice(0, 2)) {
        expect(Object.values(report.purged).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      }
      // What is left is exactly what was inside its window.
      const after = await tableCounts(ds);
      for (const [table, rows] of Object.entries(before)) {
        const deleted = RETENTION_POLICY_NAMES.filter(
          (name) => retentionPolicy(name).table === table,
        ).reduce((sum, name) => sum + eligible[name], 0);
        expect([table, after[table]]).toEqual([table, rows - deleted]);
      }
      expect(reports[reports.length - 1]!.lagSeconds).toEqual(zeroes());
    });
  });
});

function zeroes(): Record<RetentionPolicyName, number> {
  return Object.fromEntries(RETENTION_POLICY_NAMES.map((name) => [name, 0])) as Record<
    RetentionPolicyName,
    number
  >;
}

async function connect(db: TestDatabase): Promise<Client> {
  const client = new Client({
    host: db.config.DATABASE_HOST,
    port: db.config.DATABASE_PORT,
    user: db.config.DATABASE_USER,
    password: db.config.DATABASE_PASSWORD,
    database: db.config.DATABASE_NAME,
  });
  await client.connect();
  return client;
}

async function seedIdempotencyBacklog(
  ds: DataSource,
  rows: number,
  createdAt: Date,
): Promise<void> {
  const playerId = await newPlayer(ds);
  await ds.query(
    `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, created_at)
     SELECT $1, 'k-' || g, '\\x00', 'POST /v1/tickets/heartbeat', 'in_progress',
            $2::timestamptz - make_interval(secs => g)
       FROM generate_series(1, $3) g`,
    [playerId, createdAt, rows],
  );
}

/**
 * `n` rows past their window for most policies (n / 3 matches, each with two tickets that go
 * with it), plus a row inside its window for each; returns the rows a pass at NOW may delete.
 */
async function seedMixedBacklog(
  ds: DataSource,
  n: number,
): Promise<Record<RetentionPolicyName, number>> {
  const players = [await newPlayer(ds), await newPlayer(ds)];
  const past = (policy: RetentionPolicyName) => ago(windowMs(policy) + HOUR);
  const inside = (policy: RetentionPolicyName) => ago(windowMs(policy) - HOUR);
  // Older than the dead letters kept below too (their created_at less the margin holds keys back).
  await seedIdempotencyBacklog(ds, n, ago(windowMs('outbox_dead_letters') + DAY));
  for (const [status, column, policy] of [
    ['published', 'published_at', 'outbox_published'],
    ['dead', 'dead_lettered_at', 'outbox_dead_letters'],
  ] as const) {
    for (const at of [past(policy), inside(policy)]) {
      await ds.query(
        `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                             status, ${column}, created_at)
         SELECT 'match.state_changed', 'match', gen_random_uuid(), 1, $1, '{}', '{}', $2, $1, $1
           FROM generate_series(1, $3)`,
        [at, status, at === inside(policy) ? 1 : n],
      );
    }
  }
  for (const at of [past('sessions_expired'), inside('sessions_expired')]) {
    await ds.query(
      `INSERT INTO sessions (player_id, token_hash, expires_at)
       SELECT $1, gen_random_uuid()::text::bytea, $2 FROM generate_series(1, $3)`,
      [players[0], at, at === inside('sessions_expired') ? 1 : n],
    );
  }
  for (const at of [past('sessions_revoked'), inside('sessions_revoked')]) {
    await ds.query(
      `INSERT INTO sessions (player_id, token_hash, expires_at, revoked_at)
       SELECT $1, gen_random_uuid()::text::bytea, $2::timestamptz + interval '1 day', $3
         FROM generate_series(1, $4)`,
      [players[0], NOW, at, at === inside('sessions_revoked') ? 1 : n],
    );
  }
  for (const at of [past('probe_challenges'), inside('probe_challenges')]) {
    await ds.query(
      `INSERT INTO probe_challenges (player_id, region, nonce_hash, issued_at, expires_at)
       SELECT $1, 'eu-west', '\\x00', $2, $2 FROM generate_series(1, $3)`,
      [players[0], at, at === inside('probe_challenges') ? 1 : n],
    );
  }
  for (const at of [past('queue_tickets'), inside('queue_tickets')]) {
    await ds.query(
      `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, finished_at)
       SELECT $1, 'duel', 'CANCELLED', 1500, $2, $2, $2 FROM generate_series(1, $3)`,
      [players[0], at, at === inside('queue_tickets') ? 1 : n],
    );
  }
  const matches = Math.floor(n / 3);
  for (const at of [past('matches'), inside('matches')]) {
    await ds.query(
      `WITH m AS (
         INSERT INTO matches (mode, region, state, finished_at)
         SELECT 'duel', 'eu-west', 'COMPLETED', $1 FROM generate_series(1, $2)
         RETURNING id
       ), t AS (
         INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, match_id, finished_at)
         SELECT p.id, 'duel', 'COMPLETED', 1500, $1, $1, m.id, $1
           FROM m CROSS JOIN unnest($3::uuid[]) AS p(id)
         RETURNING id, player_id, match_id
       )
       INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match)
       SELECT match_id, player_id, id, 0, 1500 FROM t`,
      [at, at === inside('matches') ? 1 : matches, players],
    );
  }
  return {
    outbox_dead_letters: n,
    outbox_published: n,
    idempotency_keys: n,
    sessions_expired: n,
    sessions_revoked: n,
    probe_challenges: n,
    matches,
    // The unmatched ones, and those of the purged matches (past every window too).
    queue_tickets: n + 2 * matches,
  };
}

async function tableCounts(ds: DataSource): Promise<Record<string, number>> {
  const tables = [
    'outbox',
    'idempotency_keys',
    'sessions',
    'probe_challenges',
    'matches',
    'queue_tickets',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    counts[table] = await count(ds, table);
  }
  return counts;
}
