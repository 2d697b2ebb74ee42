import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  countByStatus,
  dispatcherEnv,
  NotificationObserver,
  orderingReport,
  TestAggregates,
} from '../support/outbox-fixtures';
import { startApp, waitFor, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

const AGGREGATES = 100;
const BACKLOG = 15;
const TRANSITIONS = 20;
/** Claim lease 2 s, relay poll 100 ms: far below BullMQ's own recovery of a dead worker's jobs. */
const CLAIM_LEASE_MS = 2_000;
const RECOVERY_BOUND_MS = 20_000;

describe('a dispatcher killed mid-batch', () => {
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

  async function startDispatcher(): Promise<RunningApp> {
    const env = await dispatcherEnv(db, prefix, {
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_CLAIM_LEASE_MS: String(CLAIM_LEASE_MS),
      OUTBOX_AUDIT_INTERVAL_MS: '250',
      OUTBOX_AUDIT_MIN_AGE_MS: '250',
    });
    const app = startApp('dispatcher', env);
    running.push(app);
    await waitForHttp(`http://127.0.0.1:${env.HEALTH_PORT}/health`);
    return app;
  }

  it('loses nothing when killed with SIGKILL and restarted: every committed row ends published or dead, in order per aggregate', async () => {
    const aggregates = await TestAggregates.create(db, redis, prefix);
    const ids = await aggregates.add(AGGREGATES);
    await aggregates.advanceEach(ids, BACKLOG);

    const first = await startDispatcher();
    // More commits while it works, through the crash and the restart.
    const writing = aggregates.advanceEach(ids, TRANSITIONS - BACKLOG);
    writing.catch(() => undefined); // awaited below; a failure surfaces there
    await waitFor(() => Promise.resolve(observer.received.length >= 300 ? true : undefined), {
      what: '300 notifications before the crash',
    });
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const inFlight = await ds.query<{ id: string }[]>(
      `SELECT id FROM outbox WHERE status = 'pending' AND claimed_at IS NOT NULL`,
    );
    // The crash left claims behind: rows handed to the dead process and never acked.
    expect(inFlight.length).toBeGreaterThan(0);
    const notifiedBeforeCrash = observer.received.length;

    const restarted = Date.now();
    await startDispatcher();
    // The dead process's jobs stay "active" in BullMQ until their locks expire (30 s) and a stalled
    // check notices (up to 30 s more); the claim lease must not wait for that.
    await waitFor(
      async () => {
        const [left] = await ds.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM outbox WHERE id = ANY($1::bigint[]) AND status = 'pending'`,
          [inFlight.map((row) => row.id)],
        );
        return left!.count === 0 ? true : undefined;
      },
      {
        timeoutMs: RECOVERY_BOUND_MS,
        intervalMs: 250,
        what: 'the rows in flight at the crash to be delivered',
      },
    );
    const recovered = Date.now();
    await writing;
    await waitFor(async () => ((await countByStatus(ds)).pending === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'every committed row published or dead-lettered',
    });

    expect(await countByStatus(ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    const report = orderingReport(observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    console.log(
      `crash: killed after ${notifiedBeforeCrash} notifications with ${inFlight.length} claimed row(s) in flight; ` +
        `those delivered ${recovered - restarted} ms after the restart; ${report.duplicates} duplicate notification(s)`,
    );
  });
});
