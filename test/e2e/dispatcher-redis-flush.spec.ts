import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { DELIVERY_QUEUE } from '@matchplane/outbox';
import { claimJobId } from '../../apps/dispatcher/src/outbox.relay';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  countByStatus,
  dispatcherEnv,
  NotificationObserver,
  orderingReport,
  TestAggregates,
  wipeRedisPrefix,
} from '../support/outbox-fixtures';
import { startApp, waitFor, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

const AGGREGATES = 600;
const TRANSITIONS = 2;
/** Ten minutes: only the auditor can bring the claimed rows back within this test. */
const CLAIM_LEASE_MS = 600_000;

describe('a dispatcher whose BullMQ keys vanish from Redis mid-run', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let redis: Redis;
  let observer: NotificationObserver;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    redis = testRedis();
    observer = await NotificationObserver.start(prefix);
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop('SIGKILL')));
    observer.stop();
    redis.disconnect();
    await deleteRedisPrefix(prefix);
    await db.drop();
  });

  it('recovers every claimed row through the auditor, long before the claim lease, and delivers all of them in order', async () => {
    const aggregates = await TestAggregates.create(db, redis, prefix);
    const ids = await aggregates.add(AGGREGATES);
    await aggregates.advanceEach(ids, TRANSITIONS);

    // One delivery at a time, so most of the claimed heads are still queued when Redis loses them.
    const env = await dispatcherEnv(db, prefix, {
      DISPATCHER_CONCURRENCY: '1',
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_CLAIM_LEASE_MS: String(CLAIM_LEASE_MS),
      OUTBOX_AUDIT_INTERVAL_MS: '500',
      OUTBOX_AUDIT_MIN_AGE_MS: '1000',
    });
    const dispatcher = startApp('dispatcher', env);
    running.push(dispatcher);
    await waitForHttp(`http://127.0.0.1:${env.HEALTH_PORT}/health`);
    await waitFor(() => Promise.resolve(observer.received.length >= 50 ? true : undefined), {
      what: '50 notifications before the flush',
    });

    expect(await wipeRedisPrefix(redis, prefix)).toBeGreaterThan(0);
    const flushed = Date.now();
    const claimed = await ds.query<{ id: string; claimed_at: Date }[]>(
      `SELECT id, claimed_at FROM outbox WHERE status = 'pending' AND claimed_at IS NOT NULL`,
    );
    let jobless = 0;
    for (const row of claimed) {
      if ((await redis.exists(`${prefix}:${DELIVERY_QUEUE}:${claimJobId(row)}`)) === 0)
        jobless += 1;
    }
    // Claimed in PostgreSQL, their jobs gone: nothing but the auditor will hand them out again.
    expect(jobless).toBeGreaterThan(100);

    await waitFor(async () => ((await countByStatus(ds)).pending === 0 ? true : undefined), {
      timeoutMs: 40_000,
      intervalMs: 250,
      what: 'every row published after the flush',
    });
    const recovered = Date.now();

    expect(await countByStatus(ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    expect(recovered - flushed).toBeLessThan(CLAIM_LEASE_MS / 10);
    expect(dispatcher.output()).toMatch(
      /re-enqueued \d+ claimed outbox row\(s\) whose job was missing from Redis/,
    );
    const report = orderingReport(observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    console.log(
      `redis flush: ${jobless} of ${claimed.length} claimed row(s) lost their jobs; all published ${recovered - flushed} ms later; ` +
        `${report.duplicates} duplicate notification(s)`,
    );
  });
});
