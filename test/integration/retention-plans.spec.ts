import type { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { IDEMPOTENCY_HOLD_SQL } from '@matchplane/idempotency';
import {
  cutoffOf,
  type RetentionPolicy,
  type RetentionWindows,
} from '../../apps/maintenance/src/retention/retention-policy';
import { RetentionPurger } from '../../apps/maintenance/src/retention/retention.purger';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { indexesUsed, planOf, seqScans } from '../support/query-plan';
import {
  RETENTION_POLICY_NAMES,
  retentionPolicies,
  retentionPolicy,
} from '../support/retention-policies';

/*
 * The purge must never scan a table: each statement is EXPLAINed over tables big enough for the
 * planner to weigh a sequential scan (100k rows each, a few percent past their window, statistics
 * fresh), and must reach its rows through the policy's index.
 */

const ROWS = 100_000;
const config = loadConfig(MaintenanceConfig, {});
const windows: RetentionWindows = config;
const NOW = new Date('2026-06-01T12:00:00.000Z');

function parameters(policy: RetentionPolicy, limit: number): unknown[] {
  return policy.owner.parameters({
    policy: policy.name,
    cutoff: cutoffOf(policy, config, NOW),
    limit,
    windows,
  });
}

/**
 * `ROWS` rows in each purged table, spread evenly from 1.02 windows before NOW up to NOW (so the
 * oldest 2% are past the window, as in a purge that keeps up), with the other states each table
 * holds in production beside them.
 */
async function seed(ds: DataSource): Promise<void> {
  const [player] = await ds.query<{ id: string }[]>(
    `INSERT INTO players DEFAULT VALUES RETURNING id`,
  );
  const [other] = await ds.query<{ id: string }[]>(
    `INSERT INTO players DEFAULT VALUES RETURNING id`,
  );
  const playerId = player!.id;
  const spread = (window: number) =>
    `$1::timestamptz - make_interval(secs => ${window} * 1.02 * (1 - g::float8 / ${ROWS}))`;
  const params = [NOW];
  await ds.query(
    `INSERT INTO idempotency_keys (player_id, key, request_hash, route, state, response_status, created_at, completed_at)
     SELECT '${playerId}', 'k-' || g, '\\x00', 'POST /v1/tickets', 'completed', 201,
            ${spread(config.RETENTION_IDEMPOTENCY_KEYS_SECONDS)}, ${spread(config.RETENTION_IDEMPOTENCY_KEYS_SECONDS)}
       FROM generate_series(1, ${ROWS}) g`,
    params,
  );
  // Mostly published, some pending, a few dead: the mix a healthy outbox has.
  await ds.query(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                         status, published_at, dead_lettered_at, created_at)
     SELECT 'match.state_changed', 'match', gen_random_uuid(), 1, at, '{}', '{}', status,
            CASE WHEN status = 'published' THEN at END, CASE WHEN status = 'dead' THEN at END, at
       FROM (SELECT ${spread(config.RETENTION_OUTBOX_PUBLISHED_SECONDS)} AS at,
                    CASE WHEN g % 100 = 0 THEN 'dead' WHEN g % 100 = 1 THEN 'pending' ELSE 'published' END AS status
               FROM generate_series(1, ${ROWS}) g) s`,
    params,
  );
  await ds.query(
    `INSERT INTO sessions (player_id, token_hash, expires_at, revoked_at)
     SELECT '${playerId}', gen_random_uuid()::text::bytea, ${spread(config.RETENTION_SESSIONS_SECONDS)},
            CASE WHEN g % 10 = 0 THEN ${spread(config.RETENTION_SESSIONS_SECONDS)} - interval '1 hour' END
       FROM generate_series(1, ${ROWS}) g`,
    params,
  );
  await ds.query(
    `INSERT INTO probe_challenges (player_id, region, nonce_hash, issued_at, expires_at, answered_at)
     SELECT '${playerId}', 'eu-west', '\\x00', at - interval '5 seconds', at, CASE WHEN g % 2 = 0 THEN at END
       FROM (SELECT g, ${spread(config.RETENTION_PROBE_CHALLENGES_SECONDS)} AS at FROM generate_series(1, ${ROWS}) g) s`,
    params,
  );
  await ds.query(
    `INSERT INTO probe_measurements (id, player_id, region, key_id, samples_ms, measured_at, recorded_at)
     SELECT gen_random_uuid(), '${playerId}', 'eu-west', 'k1', '{20}', at, at
       FROM (SELECT ${spread(config.RETENTION_PROBE_MEASUREMENTS_SECONDS)} AS at FROM generate_series(1, ${ROWS}) g) s`,
    params,
  );
  // Matches with two participants each (their tickets), allocations mostly released.
  await ds.query(
    `WITH m AS (
       INSERT INTO matches (mode, region, state, finished_at)
       SELECT 'duel', 'eu-west', 'COMPLETED', ${spread(config.RETENTION_MATCHES_SECONDS)}
         FROM generate_series(1, ${ROWS / 2}) g
       RETURNING id, finished_at
     ), a AS (
       INSERT INTO allocations (match_id, provider, server_id, endpoint, state, released_at)
       SELECT id, 'local', 'server-' || id, '127.0.0.1:7777', 'RELEASED', finished_at FROM m
     ), t AS (
       INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, match_id, finished_at)
       SELECT p, 'duel', 'COMPLETED', 1500, m.finished_at, m.finished_at, m.id, m.finished_at
         FROM m CROSS JOIN unnest(ARRAY['${playerId}', '${other!.id}']::uuid[]) AS p
       RETURNING id, player_id, match_id
     )
     INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match)
     SELECT match_id, player_id, id, 0, 1500 FROM t`,
    params,
  );
  await ds.query(
    `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, finished_at)
     SELECT '${playerId}', 'duel', 'CANCELLED', 1500, at, at, at
       FROM (SELECT ${spread(config.RETENTION_TICKETS_SECONDS)} AS at FROM generate_series(1, ${ROWS}) g) s`,
    params,
  );
  await ds.query(`ANALYZE`);
}

describe(`${RetentionPurger.name} query plans`, () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    await seed(ds);
  });

  afterAll(async () => {
    await db?.drop();
  });

  describe.each(RETENTION_POLICY_NAMES)('%s', (name) => {
    it(`deletes a batch through its index, scanning no table`, async () => {
      const policy = await retentionPolicy(name);
      const nodes = await planOf(
        ds,
        policy.owner.statements(name).purgeSql,
        parameters(policy, config.RETENTION_BATCH_SIZE),
      );

      expect(seqScans(nodes)).toEqual([]);
      expect(indexesUsed(nodes)).toContain(policy.index);
      // The delete itself goes straight to the locked rows.
      expect(
        nodes.some(
          (node) => node['Node Type'] === 'Tid Scan' && node['Relation Name'] === policy.table,
        ),
      ).toBe(true);
    });

    it(`measures its deletion lag through its index, scanning no table`, async () => {
      const policy = await retentionPolicy(name);
      const nodes = await planOf(ds, policy.owner.statements(name).lagSql, parameters(policy, 1));

      expect(seqScans(nodes)).toEqual([]);
      expect(indexesUsed(nodes)).toContain(policy.index);
    });
  });

  it('finds the oldest dead letter for the idempotency guard through outbox_dead_created_at_idx', async () => {
    const idempotency = await retentionPolicy('idempotency_keys');
    for (const nodes of [
      await planOf(
        ds,
        idempotency.owner.statements(idempotency.name).purgeSql,
        parameters(idempotency, config.RETENTION_BATCH_SIZE),
      ),
      await planOf(ds, IDEMPOTENCY_HOLD_SQL, [
        cutoffOf(idempotency, config, NOW),
        config.RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS,
      ]),
    ]) {
      expect(seqScans(nodes)).toEqual([]);
      expect(indexesUsed(nodes)).toContain('outbox_dead_created_at_idx');
    }
  });

  it('deletes what the plans promise: a batch of the oldest rows past the window', async () => {
    const purger = new RetentionPurger(
      ds,
      {
        windows: config,
        batchSize: 500,
        passBudgetMs: 60_000,
        batchPauseMs: 0,
        pressurePauseMs: 0,
        pressureLockWaiters: 10_000,
      },
      await retentionPolicies(),
    );
    const policy = await retentionPolicy('sessions_expired');
    const cutoff = cutoffOf(policy, config, NOW);
    const [before] = await ds.query<{ n: number; next: Date }[]>(
      `SELECT (SELECT count(*)::int FROM sessions WHERE expires_at < $1) AS n,
              (SELECT expires_at FROM sessions ORDER BY expires_at OFFSET 500 LIMIT 1) AS next`,
      [cutoff],
    );

    expect(await purger.purgeBatch(policy, NOW)).toBe(500);

    const [after] = await ds.query<{ n: number; oldest: Date }[]>(
      `SELECT count(*)::int AS n, min(expires_at) AS oldest FROM sessions`,
    );
    expect(before!.n).toBeGreaterThan(500);
    expect(after!.n).toBe(ROWS - 500);
    expect(after!.oldest).toEqual(before!.next);
  });
});
