import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { dataSourceOptions } from '@matchplane/persistence';
import type { RetentionPolicy } from '../../apps/maintenance/src/retention/retention-policy';
import {
  RetentionPurger,
  type RetentionPassReport,
  type RetentionPurgerOptions,
} from '../../apps/maintenance/src/retention/retention.purger';
import type { TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  RETENTION_POLICY_NAMES,
  retentionPolicies,
  type RetentionPolicyName,
} from '../support/retention-policies';

/*
 * Rows are made by the production writers (test/support/factories.ts) at controlled instants, and
 * every pass runs at a fixed `now`: these tests are about which rows the purge deletes, and the
 * rows they delete are the ones the writers write.
 */

const NOW = new Date('2026-06-01T12:00:00.000Z');
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 3_600 * SECOND;
const DAY = 24 * HOUR;

let POLICIES: readonly RetentionPolicy[] = [];
const retentionPolicy = (name: RetentionPolicyName) =>
  POLICIES.find((policy) => policy.name === name)!;

beforeAll(async () => {
  POLICIES = await retentionPolicies();
});

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

async function count(ds: DataSource, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await ds.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return row!.n;
}

const present = (ds: DataSource, table: string, column: string, values: string[]) =>
  count(ds, `${table} WHERE ${column}::text = ANY($1::text[])`, [values]);

// ---------------------------------------------------------------------------------------------

/** Makes rows whose window column is `at`; returns how many of them are still there. */
type BoundarySeed = (f: TestFactories, at: Date) => Promise<() => Promise<number>>;

const BOUNDARY_SEEDS: Record<RetentionPolicyName, BoundarySeed> = {
  outbox_dead_letters: async (f, at) => {
    const ids = await f.deadLetteredOutboxEvents(1, { deadAt: at, createdAt: ago(HOUR, at) });
    return () => present(f.ds, 'outbox', 'id', ids);
  },
  outbox_published: async (f, at) => {
    const ids = await f.publishedOutboxEvents(1, { publishedAt: at, createdAt: ago(SECOND, at) });
    return () => present(f.ds, 'outbox', 'id', ids);
  },
  idempotency_keys: async (f, at) => {
    const key = await f.idempotencyKey(await f.player(), at);
    return () => present(f.ds, 'idempotency_keys', 'key', [key]);
  },
  sessions_expired: async (f, at) => {
    const id = await f.session(await f.player(), { expiresAt: at });
    return () => present(f.ds, 'sessions', 'id', [id]);
  },
  sessions_revoked: async (f, at) => {
    // Revoked long before it would have expired: revocation alone starts the window.
    const id = await f.session(await f.player(), {
      expiresAt: new Date(NOW.getTime() + DAY),
      revokedAt: at,
    });
    return () => present(f.ds, 'sessions', 'id', [id]);
  },
  probe_challenges: async (f, at) => {
    const playerId = await f.player();
    const ids = [
      await f.probeChallenge(playerId, { expiresAt: at, answered: true }),
      await f.probeChallenge(playerId, { expiresAt: at, answered: false }),
    ];
    return () => present(f.ds, 'probe_challenges', 'id', ids);
  },
  probe_measurements: async (f, at) => {
    const id = await f.probeMeasurement(await f.player(), { recordedAt: at });
    return () => present(f.ds, 'probe_measurements', 'id', [id]);
  },
  matches: async (f, at) => {
    // Its tickets finished recently, so only the match is past a window.
    const { matchId } = await f.finishedMatch(at, { ticketsFinishedAt: ago(HOUR) });
    return () => present(f.ds, 'matches', 'id', [matchId]);
  },
  queue_tickets: async (f, at) => {
    const id = await f.endedTicket(await f.player(), { at, state: 'EXPIRED' });
    return () => present(f.ds, 'queue_tickets', 'id', [id]);
  },
};

describe(RetentionPurger.name, () => {
  let api: PlayerApi | undefined;
  let db: TestDatabase;
  let ds: DataSource;
  let f: TestFactories;
  let purger: RetentionPurger;

  /** A new private database with the API's module graph over it: the writers the factories use. */
  async function freshDatabase(options: Partial<RetentionPurgerOptions> = {}): Promise<void> {
    await api?.close();
    api = await startPlayerApi();
    db = api.db;
    ds = api.ds;
    f = TestFactories.of(api);
    purger = new RetentionPurger(ds, purgerOptions(options), POLICIES);
  }

  afterAll(async () => {
    await api?.close();
  });

  it('purges what the owners declare, in their round order', () => {
    expect(POLICIES.map((policy) => policy.name)).toEqual([...RETENTION_POLICY_NAMES]);
  });

  describe('window boundaries', () => {
    beforeEach(() => freshDatabase());

    it.each(RETENTION_POLICY_NAMES)(
      '%s: keeps a row one second inside its window and purges one second past it',
      async (policy) => {
        const cutoff = ago(windowMs(policy));
        const seed = BOUNDARY_SEEDS[policy];
        const inside = await seed(f, new Date(cutoff.getTime() + SECOND));
        const past = await seed(f, new Date(cutoff.getTime() - SECOND));
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
      purger = new RetentionPurger(ds, purgerOptions({ passBudgetMs: 0 }), POLICIES);
      await BOUNDARY_SEEDS.queue_tickets(f, ago(windowMs('queue_tickets') + 90 * SECOND));

      const report = await purger.pass({ now: NOW });

      expect(report.outcome).toBe('budget_exhausted');
      expect(report.purged.queue_tickets).toBe(0);
      expect(report.lagSeconds?.queue_tickets).toBeCloseTo(90, 3);
    });

    it('deletes a match with its participants, assignments, allocation and roster, and unlinks its tickets', async () => {
      const past = await f.finishedMatch(ago(windowMs('matches') + SECOND), {
        ticketsFinishedAt: ago(HOUR),
      });
      const kept = await f.finishedMatch(ago(windowMs('matches') - SECOND), {
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
      // ALLOCATED: the live state the allocator records. REQUESTED, the other one the hold names,
      // no writer records (yet), so no test can make one.
      const live = await Promise.all(
        (['ALLOCATED', 'ALLOCATED'] as const).map((allocation) =>
          f.finishedMatch(finishedAt, { allocation, ticketsFinishedAt: ago(HOUR) }),
        ),
      );
      const done = await Promise.all(
        (['RELEASED', 'FAILED'] as const).map((allocation) =>
          f.finishedMatch(finishedAt, { allocation, ticketsFinishedAt: ago(HOUR) }),
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
      const match = await f.finishedMatch(ago(DAY), {
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
      await f.deadLetteredOutboxEvents(1, { deadAt: ago(9 * DAY), createdAt: deadCreatedAt });
      const playerId = await f.player();
      const guardCutoff = ago(margin, deadCreatedAt);
      const olderThanGuard = await f.idempotencyKey(playerId, ago(SECOND, guardCutoff));
      const youngerThanGuard = await f.idempotencyKey(
        playerId,
        new Date(guardCutoff.getTime() + SECOND),
      );
      const pastWindowOnly = await f.idempotencyKey(
        playerId,
        ago(windowMs('idempotency_keys') + HOUR),
      );
      const insideWindow = await f.idempotencyKey(playerId, ago(HOUR));

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
      const [deadId] = await f.deadLetteredOutboxEvents(1, {
        deadAt: ago(4 * DAY),
        createdAt: ago(5 * DAY),
      });
      const key = await f.idempotencyKey(await f.player(), ago(3 * DAY));

      expect((await purger.pass({ now: NOW })).purged.idempotency_keys).toBe(0);
      await ds.query(`DELETE FROM outbox WHERE id = $1`, [deadId]); // an operator's discard
      const report = await purger.pass({ now: NOW });

      expect(report.purged.idempotency_keys).toBe(1);
      expect(report.idempotencyHoldSeconds).toBe(0);
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });

    it('lets a dead letter leaving its own window release the keys in the same pass', async () => {
      const deadAt = ago(windowMs('outbox_dead_letters') + SECOND);
      await f.deadLetteredOutboxEvents(1, { deadAt, createdAt: ago(HOUR, deadAt) });
      const key = await f.idempotencyKey(await f.player(), ago(3 * DAY));

      const report = await purger.pass({ now: NOW });

      expect(report.purged).toMatchObject({ outbox_dead_letters: 1, idempotency_keys: 1 });
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });

    it('is not held back by published or pending rows', async () => {
      await f.publishedOutboxEvents(1, { publishedAt: ago(5 * DAY), createdAt: ago(5 * DAY) });
      await f.outboxEvents(1, ago(5 * DAY));
      const key = await f.idempotencyKey(await f.player(), ago(3 * DAY));

      const report = await purger.pass({ now: NOW });

      expect(report.purged.idempotency_keys).toBe(1);
      expect(await present(ds, 'idempotency_keys', 'key', [key])).toBe(0);
    });
  });

  describe('batches', () => {
    beforeAll(() => freshDatabase());

    it('stops a pass when its budget is spent and goes on in the next', async () => {
      const total = 20_000;
      await f.idempotencyKeys(await f.player(), total, ago(3 * DAY));
      const budgeted = new RetentionPurger(
        ds,
        purgerOptions({ batchSize: 100, passBudgetMs: 300, batchPauseMs: 5, pressurePauseMs: 5 }),
        POLICIES,
      );

      const first = await budgeted.pass({ now: NOW });

      expect(first.outcome).toBe('budget_exhausted');
      expect(first.purged.idempotency_keys).toBeGreaterThan(0);
      expect(first.purged.idempotency_keys).toBeLessThan(total);
      // The budget bounds when the last batch starts; that batch and the lag queries follow it.
      expect(first.durationMs).toBeLessThan(300 + 1_000);
      expect(first.lagSeconds?.idempotency_keys).toBeGreaterThan(0);
      expect(await count(ds, `idempotency_keys`)).toBe(
        total - (first.purged.idempotency_keys ?? 0),
      );

      const reports: RetentionPassReport[] = [first];
      while (reports[reports.length - 1]!.outcome !== 'complete') {
        reports.push(await budgeted.pass({ now: NOW }));
        expect(reports.length).toBeLessThan(200);
      }
      expect(reports[1]!.purged.idempotency_keys).toBeGreaterThan(0);
      expect(reports.reduce((sum, report) => sum + (report.purged.idempotency_keys ?? 0), 0)).toBe(
        total,
      );
      expect(await count(ds, `idempotency_keys`)).toBe(0);
      expect(reports[reports.length - 1]!.lagSeconds?.idempotency_keys).toBe(0);
    });

    it('takes the policies in turn, so one backlog does not starve the others', async () => {
      await f.idempotencyKeys(await f.player(), 20_000, ago(3 * DAY));
      const ticket = await f.endedTicket(await f.player(), { at: ago(30 * DAY) });
      const budgeted = new RetentionPurger(
        ds,
        purgerOptions({ batchSize: 20, passBudgetMs: 200 }),
        POLICIES,
      );

      const report = await budgeted.pass({ now: NOW });

      expect(report.outcome).toBe('budget_exhausted');
      expect(report.purged.queue_tickets).toBe(1);
      expect(await present(ds, 'queue_tickets', 'id', [ticket])).toBe(0);
      await ds.query(`DELETE FROM idempotency_keys`);
    });

    it('stops before its next batch when aborted', async () => {
      await f.idempotencyKeys(await f.player(), 2_000, ago(3 * DAY));
      const slow = new RetentionPurger(
        ds,
        purgerOptions({ batchSize: 100, batchPauseMs: 60_000, pressurePauseMs: 60_000 }),
        POLICIES,
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
          POLICIES,
        );
        await waitFor(async () =>
          (await pressured.pressure('sessions')).lockWaiters >= 3 ? true : undefined,
        );
        const playerId = await f.player();
        for (let i = 0; i < 25; i += 1) await f.session(playerId, { expiresAt: ago(30 * DAY) });

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
      const probe = new RetentionPurger(ds, purgerOptions(), POLICIES);
      await ds.query(`ALTER TABLE probe_challenges SET (autovacuum_enabled = false)`);
      const playerId = await f.player();
      // Issued and left unanswered. Each issue also restamps its row as the answer leaves (an
      // UPDATE, so a dead tuple): a manual VACUUM clears those, leaving none before the DELETE.
      await inLanes(1_000, () => f.probeChallenge(playerId));
      await ds.query(`VACUUM probe_challenges`);
      await waitFor(async () =>
        (await probe.pressure('probe_challenges')).vacuumBehind ? undefined : true,
      );

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
      // 1,500 a policy (each made by its writer, a statement or a transaction a row): batches of
      // 50 still interleave over thirty and more of them per policy.
      const eligible = await seedMixedBacklog(f, 1_500);
      const before = await tableCounts(ds);
      const options = purgerOptions({ batchSize: 50 });
      const replicas = [
        new RetentionPurger(ds, options, POLICIES),
        new RetentionPurger(other, options, POLICIES),
      ];

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
        purgedTogether[name] = reports.reduce((sum, report) => sum + (report.purged[name] ?? 0), 0);
      }
      expect(purgedTogether).toEqual(eligible);
      // Both took part: batches of 50 over thousands of rows in all interleave.
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

const LANES = 6;

/** `count` calls of `fn`, LANES at a time (the writers write a row a statement); `fn` learns its lane. */
async function inLanes(count: number, fn: (lane: number) => Promise<unknown>): Promise<void> {
  let started = 0;
  const run = async (lane: number) => {
    while (started < count) {
      started += 1;
      await fn(lane);
    }
  };
  await Promise.all(Array.from({ length: LANES }, (_, lane) => run(lane)));
}

/**
 * `n` rows past their window for most policies (n / 3 matches, each with two tickets that go
 * with it), plus a row inside its window for each; returns the rows a pass at NOW may delete.
 */
async function seedMixedBacklog(
  f: TestFactories,
  n: number,
): Promise<Record<RetentionPolicyName, number>> {
  const past = (policy: RetentionPolicyName) => ago(windowMs(policy) + HOUR);
  const inside = (policy: RetentionPolicyName) => ago(windowMs(policy) - HOUR);
  const both = async (
    policy: RetentionPolicyName,
    make: (at: Date, count: number) => Promise<unknown>,
  ) => {
    await make(past(policy), n);
    await make(inside(policy), 1);
  };
  // Older than the dead letters kept below too (their created_at less the margin holds keys back).
  await f.idempotencyKeys(await f.player(), n, ago(windowMs('outbox_dead_letters') + DAY));
  await both('outbox_published', (at, count) =>
    f.publishedOutboxEvents(count, { publishedAt: at, createdAt: at }),
  );
  await both('outbox_dead_letters', (at, count) =>
    f.deadLetteredOutboxEvents(count, { deadAt: at, createdAt: at }),
  );
  const playerId = await f.player();
  await both('sessions_expired', (at, count) =>
    inLanes(count, () => f.session(playerId, { expiresAt: at })),
  );
  await both('sessions_revoked', (at, count) =>
    inLanes(count, () =>
      f.session(playerId, { expiresAt: new Date(NOW.getTime() + DAY), revokedAt: at }),
    ),
  );
  await both('probe_challenges', (at, count) =>
    inLanes(count, () => f.probeChallenge(playerId, { expiresAt: at })),
  );
  await both('probe_measurements', (at, count) =>
    inLanes(count, () => f.probeMeasurement(playerId, { recordedAt: at })),
  );
  // A player has one live ticket at a time: each lane's tickets are its own player's.
  const lanePlayers: string[] = [];
  for (let lane = 0; lane < LANES; lane += 1) lanePlayers.push(await f.player());
  await both('queue_tickets', (at, count) =>
    inLanes(count, (lane) => f.endedTicket(lanePlayers[lane]!, { at })),
  );
  const matches = Math.floor(n / 3);
  for (const [at, count] of [
    [past('matches'), matches],
    [inside('matches'), 1],
  ] as const) {
    // Ended by an operator while it played, its tickets with it (at the same instant; cancelled
    // before the game, its players would search again).
    await inLanes(count, async () => {
      const { matchId } = await f.duel(ago(10 * MINUTE, at));
      await f.advanceMatch(matchId, 'IN_PROGRESS', { at: ago(5 * MINUTE, at) });
      await f.cancelMatch(matchId, at);
    });
  }
  return {
    outbox_dead_letters: n,
    outbox_published: n,
    idempotency_keys: n,
    sessions_expired: n,
    sessions_revoked: n,
    probe_challenges: n,
    probe_measurements: n,
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
    'probe_measurements',
    'matches',
    'queue_tickets',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    counts[table] = await count(ds, table);
  }
  return counts;
}
