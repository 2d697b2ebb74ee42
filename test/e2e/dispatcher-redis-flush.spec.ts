import {
  countByStatus,
  orderingReport,
  TestAggregates,
  wipeRedisPrefix,
  useDispatcherProcesses,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

const AGGREGATES = 600;
const TRANSITIONS = 2;
/** Ten minutes: nothing may wait for a claim to expire within this test. */
const CLAIM_LEASE_MS = 600_000;

describe('a dispatcher whose Redis keys vanish mid-run', () => {
  const h = useDispatcherProcesses();

  it('loses nothing and waits for nothing: claims live in PostgreSQL, so every row is delivered in order, long before the claim lease', async () => {
    const aggregates = await TestAggregates.create(h.db, h.redis, h.prefix);
    const ids = await aggregates.add(AGGREGATES);
    await aggregates.advanceEach(ids, TRANSITIONS);

    // Few aggregates at a time, so most of the backlog is claimed after the flush.
    await h.start({
      DISPATCHER_CONCURRENCY: '4',
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_CLAIM_LEASE_MS: String(CLAIM_LEASE_MS),
    });
    await waitFor(() => Promise.resolve(h.observer.received.length >= 50 ? true : undefined), {
      what: '50 notifications before the flush',
    });

    expect(await wipeRedisPrefix(h.redis, h.prefix)).toBeGreaterThan(0);
    const flushed = Date.now();
    const [claimed] = await h.ds.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM outbox WHERE status = 'pending' AND claimed_at IS NOT NULL`,
    );
    const [pending] = await h.ds.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM outbox WHERE status = 'pending'`,
    );
    expect(pending!.count).toBeGreaterThan(100);

    await waitFor(async () => ((await countByStatus(h.ds)).pending === 0 ? true : undefined), {
      timeoutMs: 40_000,
      intervalMs: 250,
      what: 'every row published after the flush',
    });
    const recovered = Date.now();

    expect(await countByStatus(h.ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    expect(recovered - flushed).toBeLessThan(CLAIM_LEASE_MS / 10);
    const report = orderingReport(h.observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    console.log(
      `redis flush: ${pending!.count} row(s) pending (${claimed!.count} claimed) at the flush; all published ${recovered - flushed} ms later; ` +
        `${report.duplicates} duplicate notification(s)`,
    );
  });
});
