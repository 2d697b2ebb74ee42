import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  CLAIM_HEADS_SQL,
  RENEW_CLAIMS_SQL,
  SETTLE_DELIVERED_SQL,
  SETTLE_SQL,
} from '@matchplane/outbox';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { indexesUsed, planOf, seqScans } from '../support/query-plan';

/*
 * The dispatcher's statements must never scan the outbox: each is EXPLAINed over an outbox big
 * enough for the planner to weigh a sequential scan (a long published history, a pending backlog
 * over many aggregates, part of it claimed, statistics fresh). Rows are inserted by SQL: a plan
 * test needs volume, not the write path, which the delivery suites drive.
 */
const PUBLISHED = 100_000;
const AGGREGATES = 2_000;
const PENDING_PER_AGGREGATE = 5;
const LIVENESS = [60_000, 1_500];

async function seed(ds: DataSource): Promise<void> {
  await ds.query(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload,
                         status, published_at, created_at)
     SELECT 'match.state_changed', 'match', gen_random_uuid(), 1, now(), '{}', '{}', 'published', now(), now()
       FROM generate_series(1, ${PUBLISHED})`,
  );
  await ds.query(
    `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload)
     SELECT 'match.state_changed', 'match', a.id, r, now(), '{}', '{}'
       FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, ${AGGREGATES})) a
      CROSS JOIN generate_series(1, ${PENDING_PER_AGGREGATE}) r`,
  );
  // A tenth of the aggregates in flight.
  await ds.query(
    `UPDATE outbox SET claimed_at = now(), claim_token = gen_random_uuid(), claimed_by = gen_random_uuid()
      WHERE status = 'pending' AND revision = 1 AND id % 10 = 0`,
  );
  await ds.query(`ANALYZE outbox`);
}

describe('outbox delivery statement plans', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let heads: { id: string; claim_token: string }[];

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    await seed(ds);
    heads = await ds.query(
      `SELECT id, coalesce(claim_token, gen_random_uuid()) AS claim_token
         FROM outbox WHERE status = 'pending' AND revision = 1 LIMIT 100`,
    );
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('claims heads through outbox_pending_head, scanning no table', async () => {
    const nodes = await planOf(ds, CLAIM_HEADS_SQL, [500, randomUUID(), randomUUID(), ...LIVENESS]);
    expect(seqScans(nodes).filter((relation) => relation === 'outbox')).toEqual([]);
    expect(indexesUsed(nodes)).toContain('outbox_pending_head');
  });

  it('settles a batch by primary key and finds each successor through outbox_pending_head', async () => {
    const nodes = await planOf(ds, SETTLE_SQL, [
      heads.map((head) => head.id),
      heads.map((head) => head.claim_token),
      heads.map((_, index) => (index % 10 === 0 ? 'Error: boom' : null)),
      heads.map(() => false),
      heads.map(() => 500),
      10,
      randomUUID(),
      randomUUID(),
    ]);
    expect(seqScans(nodes).filter((relation) => relation === 'outbox')).toEqual([]);
    expect(indexesUsed(nodes)).toEqual(
      expect.arrayContaining(['outbox_pkey', 'outbox_pending_head']),
    );
  });

  it('settles an all-delivered batch the same way, without the failure branches', async () => {
    const nodes = await planOf(ds, SETTLE_DELIVERED_SQL, [
      heads.map((head) => head.id),
      heads.map((head) => head.claim_token),
      randomUUID(),
      randomUUID(),
    ]);
    expect(seqScans(nodes).filter((relation) => relation === 'outbox')).toEqual([]);
    expect(indexesUsed(nodes)).toEqual(
      expect.arrayContaining(['outbox_pkey', 'outbox_pending_head']),
    );
  });

  it('renews claims by primary key', async () => {
    const nodes = await planOf(ds, RENEW_CLAIMS_SQL, [
      heads.map((head) => head.id),
      heads.map((head) => head.claim_token),
    ]);
    expect(seqScans(nodes)).toEqual([]);
    expect(indexesUsed(nodes)).toContain('outbox_pkey');
  });
});
