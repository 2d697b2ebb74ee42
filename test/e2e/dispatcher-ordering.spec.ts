import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import {
  countByStatus,
  dispatcherEnv,
  NotificationObserver,
  orderingReport,
  testAggregateState,
  TestAggregates,
} from '../support/outbox-fixtures';
import { startApp, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

const AGGREGATES = 200;
const TRANSITIONS = 20;
const WRITERS = 20;
const DISPATCHERS = 3;

describe('dispatcher processes deliver each aggregate in commit order', () => {
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

  it(`${AGGREGATES} aggregates x ${TRANSITIONS} transitions from ${WRITERS} concurrent writers, ${DISPATCHERS} dispatchers: revisions rise without gap, none missing`, async () => {
    const healthUrls: string[] = [];
    for (let index = 0; index < DISPATCHERS; index += 1) {
      const env = await dispatcherEnv(db, prefix, {
        OUTBOX_POLL_INTERVAL_MS: '100',
        DISPATCHER_CONCURRENCY: '16',
      });
      running.push(startApp('dispatcher', env));
      healthUrls.push(`http://127.0.0.1:${env.HEALTH_PORT}`);
    }
    await Promise.all(healthUrls.map((url) => waitForHttp(`${url}/health`)));

    const aggregates = await TestAggregates.create(db, redis, prefix);
    const ids = await aggregates.add(AGGREGATES);
    // Each writer takes the next transition of a random aggregate that still has one: writers
    // race on the same aggregate now and then, and the loser re-reads and retries (optimistic).
    const remaining = new Map(ids.map((id) => [id, TRANSITIONS]));
    const writer = async () => {
      for (;;) {
        const open = [...remaining.keys()];
        if (open.length === 0) return;
        const id = open[Math.floor(Math.random() * open.length)]!;
        const left = remaining.get(id)! - 1;
        if (left === 0) remaining.delete(id);
        else remaining.set(id, left);
        await aggregates.advance(id);
      }
    };
    const writing = Date.now();
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const written = Date.now();

    await observer.waitForAll(ids, TRANSITIONS, 45_000);
    const delivered = Date.now();

    const report = orderingReport(observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    expect(await countByStatus(ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    for (const notification of observer.received) {
      expect(notification).toMatchObject({
        event: 'ticket.state_changed',
        aggregateType: 'ticket',
        state: testAggregateState(notification.revision),
      });
    }
    // All three took part: no replica sat idle while another delivered everything.
    const perProcess = await Promise.all(
      healthUrls.map(async (url) => {
        const metrics = await fetch(`${url}/metrics`).then((response) => response.text());
        const counts = [...metrics.matchAll(/^outbox_delivered_total\{[^}]*\} (\d+)/gm)].map(
          (match) => Number(match[1]),
        );
        return counts.reduce((sum, count) => sum + count, 0);
      }),
    );
    for (const count of perProcess) expect(count).toBeGreaterThan(0);
    expect(perProcess.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(
      AGGREGATES * TRANSITIONS,
    );

    console.log(
      `ordering: ${AGGREGATES * TRANSITIONS} events written in ${written - writing} ms (${aggregates.lostRaces} lost optimistic races retried), ` +
        `all delivered ${delivered - written} ms after the last commit; ${report.duplicates} duplicate notification(s); ` +
        `per dispatcher: ${perProcess.join(', ')}`,
    );
  });
});
