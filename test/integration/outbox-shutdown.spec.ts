import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { DispatcherLease } from '../../apps/dispatcher/src/dispatcher.lease';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  dispatcherEnv,
  outboxRow,
  startInProcessDispatcher,
  TestAggregates,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

/*
 * A dispatcher shut down cleanly deletes its registration, so the claims it still holds (here an
 * ack the database keeps refusing) are taken over at the next claim pass, not after its silence
 * reaches the owner timeout, which is long here (10 s) to tell the two apart.
 */
const OWNER_TIMEOUT_MS = 10_000;

describe('a dispatcher shut down cleanly', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let redis: Redis;
  let aggregates: TestAggregates;
  const dispatchers: InProcessDispatcher[] = [];
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    redis = testRedis();
    aggregates = await TestAggregates.create(db, redis, prefix);
  });

  afterAll(async () => {
    for (const dispatcher of dispatchers) await dispatcher.close();
    await ds.query(`DROP TRIGGER IF EXISTS test_refuse_ack ON outbox`);
    await ds.query(`DROP FUNCTION IF EXISTS test_refuse_ack()`);
    redis.disconnect();
    await deleteRedisPrefix(prefix);
    await db.drop();
  });

  const start = async () => {
    const dispatcher = await startInProcessDispatcher(
      await dispatcherEnv(db, prefix, {
        OUTBOX_POLL_INTERVAL_MS: '100',
        OUTBOX_OWNER_TIMEOUT_MS: String(OWNER_TIMEOUT_MS),
      }),
    );
    dispatchers.push(dispatcher);
    return dispatcher;
  };

  it('hands the claims it could not settle to the others at once', async () => {
    const [id] = await aggregates.add(1);
    const written = await aggregates.advance(id!);
    const outboxId = await aggregates.outboxIdOf(written);
    await ds.query(`
      CREATE FUNCTION test_refuse_ack() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'test fault: ack refused';
      END $$`);
    await ds.query(`
      CREATE TRIGGER test_refuse_ack BEFORE UPDATE ON outbox FOR EACH ROW
        WHEN (OLD.id = ${Number(outboxId)} AND NEW.status = 'published')
        EXECUTE FUNCTION test_refuse_ack()`);

    const a = await start();
    const owner = a.app.get(DispatcherLease).id;
    await waitFor(
      () => Promise.resolve(a.recorder.deliveredRevisions(id!).length > 0 ? true : undefined),
      {
        what: 'the first dispatcher to deliver the row it cannot ack',
      },
    );
    const b = await start();
    expect(
      (
        await ds.query<{ claimed_by: string }[]>(`SELECT claimed_by FROM outbox WHERE id = $1`, [
          outboxId,
        ])
      )[0]?.claimed_by,
    ).toBe(owner);

    const closing = Date.now();
    await a.close();
    dispatchers.splice(dispatchers.indexOf(a), 1);
    expect(await ds.query(`SELECT id FROM outbox_dispatchers WHERE id = $1`, [owner])).toEqual([]);
    await waitFor(
      () => Promise.resolve(b.recorder.deliveredRevisions(id!).length > 0 ? true : undefined),
      {
        timeoutMs: OWNER_TIMEOUT_MS / 2,
        intervalMs: 20,
        what: 'the other dispatcher to take the claim over',
      },
    );
    const takenOverMs = Date.now() - closing;

    await ds.query(`DROP TRIGGER test_refuse_ack ON outbox`);
    await ds.query(`DROP FUNCTION test_refuse_ack()`);
    await waitFor(
      async () => ((await outboxRow(ds, outboxId)).status === 'published' ? true : undefined),
      {
        what: 'the row acked by the other dispatcher',
      },
    );
    expect(takenOverMs).toBeLessThan(OWNER_TIMEOUT_MS / 2);
    console.log(
      `shutdown: the claim was delivered by the other dispatcher ${takenOverMs} ms after close() began`,
    );
  });
});
