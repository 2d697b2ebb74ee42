import {
  countByStatus,
  orderingReport,
  testAggregateState,
  TestAggregates,
  useDispatcherProcesses,
} from '../support/outbox-fixtures';

const AGGREGATES = 200;
const TRANSITIONS = 20;
const WRITERS = 20;
const DISPATCHERS = 3;

describe('dispatcher processes deliver each aggregate in commit order', () => {
  // A connection per writer: queued for one of a smaller pool, a writer could wait past the
  // pool's connect timeout on a loaded machine (timeout exceeded when trying to connect).
  const h = useDispatcherProcesses({ testPoolSize: WRITERS });

  it(`${AGGREGATES} aggregates x ${TRANSITIONS} transitions from ${WRITERS} concurrent writers, ${DISPATCHERS} dispatchers: revisions rise without gap, none missing`, async () => {
    await Promise.all(
      Array.from({ length: DISPATCHERS }, () =>
        h.start({ OUTBOX_POLL_INTERVAL_MS: '100', DISPATCHER_CONCURRENCY: '16' }),
      ),
    );

    const aggregates = await TestAggregates.create(h.db, h.redis, h.prefix);
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

    await h.observer.waitForAll(ids, TRANSITIONS, 45_000);
    const delivered = Date.now();

    const report = orderingReport(h.observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    expect(await countByStatus(h.ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    for (const notification of h.observer.received) {
      expect(notification).toMatchObject({
        event: 'ticket.state_changed',
        aggregateType: 'ticket',
        state: testAggregateState(notification.revision),
      });
    }
    // All three took part: no replica sat idle while another delivered everything.
    const metricSum = (metrics: string, name: string) =>
      [...metrics.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))]
        .map((match) => Number(match[1]))
        .reduce((sum, count) => sum + count, 0);
    const perProcess = await Promise.all(
      h.baseUrls.map(async (url) => {
        const metrics = await fetch(`${url}/metrics`).then((response) => response.text());
        return {
          delivered: metricSum(metrics, 'outbox_delivered_total'),
          settles: metricSum(metrics, 'outbox_settle_statements_total'),
        };
      }),
    );
    for (const { delivered } of perProcess) expect(delivered).toBeGreaterThan(0);
    const total = (key: 'delivered' | 'settles') =>
      perProcess.reduce((sum, counts) => sum + counts[key], 0);
    expect(total('delivered')).toBeGreaterThanOrEqual(AGGREGATES * TRANSITIONS);
    // Delivered in batches: fewer settle statements than events.
    expect(total('settles')).toBeLessThan(total('delivered'));

    console.log(
      `ordering: ${AGGREGATES * TRANSITIONS} events written in ${written - writing} ms (${aggregates.lostRaces} lost optimistic races retried), ` +
        `all delivered ${delivered - written} ms after the last commit; ${report.duplicates} duplicate notification(s); ` +
        `per dispatcher: ${perProcess.map((counts) => `${counts.delivered} delivered in ${counts.settles} settle statements`).join(', ')}`,
    );
  });
});
