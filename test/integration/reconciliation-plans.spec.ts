import type { DataSource } from 'typeorm';
import {
  ALLOCATING_MATCH_RULE,
  CLAIM_FINISHED_ALLOCATION_SQL,
  FINISHED_ALLOCATIONS_SQL,
} from '@matchplane/allocation';
import { STUCK_MATCH_RULES, stuckMatchRuleSql } from '@matchplane/matches';
import { EXPIRED_TICKETS_SQL } from '@matchplane/tickets';
import { LifecycleReconciler } from '../../apps/maintenance/src/reconciliation/lifecycle.reconciler';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { indexesUsed, planOf, seqScans } from '../support/query-plan';

/*
 * Reconciliation runs every few seconds against tables that keep weeks of finished rows: each of
 * its selects is EXPLAINed over such tables (statistics fresh) and must reach its few live rows
 * through the intended index, never a sequential scan.
 */

const FINISHED = 50_000;
const LIVE = 200;
const NOW = new Date('2026-06-01T12:00:00.000Z');

/** Weeks of finished tickets, matches and allocations, and a few hundred live ones of each kind. */
async function seed(ds: DataSource): Promise<void> {
  await ds.query(`INSERT INTO players (id) SELECT gen_random_uuid() FROM generate_series(1, $1)`, [
    LIVE + 1,
  ]);
  const ago = `$1::timestamptz - make_interval(secs => g)`;
  await ds.query(
    `INSERT INTO matches (mode, region, state, revision, created_at, state_changed_at, finished_at)
     SELECT 'duel', 'eu-west', 'COMPLETED', 5, ${ago}, ${ago}, ${ago} FROM generate_series(1, $2) g`,
    [NOW, FINISHED],
  );
  await ds.query(
    `INSERT INTO matches (mode, region, state, revision, created_at, state_changed_at)
     SELECT 'duel', 'eu-west', (ARRAY['ALLOCATING', 'PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS'])[1 + g % 4],
            3, ${ago}, ${ago}
       FROM generate_series(1, $2) g`,
    [NOW, LIVE],
  );
  // Every finished match's server released, every live match's allocated, and a few finished
  // matches' still live: what reconciliation is there to find.
  await ds.query(
    `INSERT INTO allocations (match_id, provider, server_id, endpoint, state, released_at)
     SELECT x.id, 'local', 'server-' || x.id, '127.0.0.1:7777',
            CASE WHEN x.live THEN 'ALLOCATED' ELSE 'RELEASED' END,
            CASE WHEN x.live THEN NULL ELSE x.finished_at END
       FROM (SELECT m.id, m.finished_at, m.finished_at IS NULL OR random() < 0.001 AS live
               FROM matches m) x`,
  );
  const [player] = await ds.query<{ id: string }[]>(`SELECT id FROM players LIMIT 1`);
  await ds.query(
    `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at, finished_at)
     SELECT $3, 'duel', 'EXPIRED', 1500, ${ago}, ${ago}, ${ago} FROM generate_series(1, $2) g`,
    [NOW, FINISHED, player!.id],
  );
  await ds.query(
    `INSERT INTO queue_tickets (player_id, mode, state, rating, enqueued_at, last_heartbeat_at)
     SELECT p.id, 'duel', 'SEARCHING', 1500, $1::timestamptz - interval '1 minute',
            $1::timestamptz - make_interval(secs => 60 * random())
       FROM players p WHERE p.id <> $2`,
    [NOW, player!.id],
  );
  // One participant per finished match, on its finished ticket.
  await ds.query(
    `INSERT INTO match_participants (match_id, player_id, ticket_id, team, rating_at_match, connected_at)
     SELECT m.id, t.player_id, t.id, 0, 1500, m.finished_at
       FROM (SELECT id, finished_at, row_number() OVER (ORDER BY id) AS n FROM matches
              WHERE finished_at IS NOT NULL) m
       JOIN (SELECT id, player_id, row_number() OVER (ORDER BY id) AS n FROM queue_tickets
              WHERE state = 'EXPIRED') t ON t.n = m.n`,
  );
  for (const table of [
    'players',
    'matches',
    'allocations',
    'queue_tickets',
    'match_participants',
  ]) {
    await ds.query(`VACUUM ANALYZE ${table}`);
  }
}

describe(`${LifecycleReconciler.name} query plans`, () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    await seed(ds);
  });

  afterAll(() => db.drop());

  it('finds expired tickets through queue_tickets_heartbeat_idx', async () => {
    const nodes = await planOf(ds, EXPIRED_TICKETS_SQL, [
      new Date(NOW.getTime() - 30_000),
      100,
      [],
    ]);
    expect(seqScans(nodes)).toEqual([]);
    expect(indexesUsed(nodes)).toContain('queue_tickets_heartbeat_idx');
  });

  it.each([ALLOCATING_MATCH_RULE, ...STUCK_MATCH_RULES].map((rule) => [rule.state, rule] as const))(
    'claims stuck %s matches through matches_live_state_idx',
    async (_state, rule) => {
      const nodes = await planOf(ds, stuckMatchRuleSql(rule), [
        new Date(NOW.getTime() - 60_000),
        [],
      ]);
      expect(seqScans(nodes)).toEqual([]);
      expect(indexesUsed(nodes)).toContain('matches_live_state_idx');
      // The facts that decide the reason are looked up by key too.
      const facts: Partial<Record<typeof rule.state, string>> = {
        ALLOCATING: 'allocations_pkey',
        ASSIGNMENT_READY: 'match_participants_pkey',
      };
      const fact = facts[rule.state];
      if (fact) expect(indexesUsed(nodes)).toContain(fact);
    },
  );

  it("finds ended matches' live allocations without scanning the released ones", async () => {
    const nodes = await planOf(ds, FINISHED_ALLOCATIONS_SQL, [100, []]);
    expect(seqScans(nodes)).toEqual([]);
    expect(indexesUsed(nodes)).toEqual(
      expect.arrayContaining(['allocations_live_server_id_key', 'matches_pkey']),
    );
  });

  it('claims one allocation by its key', async () => {
    const [row] = await ds.query<{ match_id: string }[]>(
      `SELECT match_id FROM allocations LIMIT 1`,
    );
    const nodes = await planOf(ds, CLAIM_FINISHED_ALLOCATION_SQL, [row!.match_id]);
    expect(seqScans(nodes)).toEqual([]);
    expect(indexesUsed(nodes)).toContain('allocations_pkey');
  });
});
