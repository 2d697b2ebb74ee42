import { DELIVERY_QUEUE } from '@matchplane/outbox';
import { claimJobId } from '../../apps/dispatcher/src/outbox.relay';
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
/** Ten minutes: only the auditor can bring the claimed rows back within this test. */
const CLAIM_LEASE_MS = 600_000;

describe('a dispatcher whose BullMQ keys vanish from Redis mid-run', () => {
  const h = useDispatcherProcesses();

  it('recovers every claimed row through the auditor, long before the claim lease, and delivers all of them in order', async () => {
    const aggregates = await TestAggregates.create(h.db, h.redis, h.prefix);
    const ids = await aggregates.add(AGGREGATES);
    await aggregates.advanceEach(ids, TRANSITIONS);

    // One delivery at a time, so most of the claimed heads are still queued when Redis loses them.
    const dispatcher = await h.start({
      DISPATCHER_CONCURRENCY: '1',
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_CLAIM_LEASE_MS: String(CLAIM_LEASE_MS),
      OUTBOX_AUDIT_INTERVAL_MS: '500',
      OUTBOX_AUDIT_MIN_AGE_MS: '1000',
    });
    await waitFor(() => Promise.resolve(h.observer.received.length >= 50 ? true : undefined), {
      what: '50 notifications before the flush',
    });

    expect(await wipeRedisPrefix(h.redis, h.prefix)).toBeGreaterThan(0);
    const flushed = Date.now();
    const claimed = await h.ds.query<{ id: string; claimed_at: Date }[]>(
      `SELECT id, claimed_at FROM outbox WHERE status = 'pending' AND claimed_at IS NOT NULL`,
    );
    let jobless = 0;
    for (const row of claimed) {
      if ((await h.redis.exists(`${h.prefix}:${DELIVERY_QUEUE}:${claimJobId(row)}`)) === 0)
        jobless += 1;
    }
    // Claimed in PostgreSQL, their jobs gone: nothing but the auditor will hand them out again.
    expect(jobless).toBeGreaterThan(100);

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
    expect(dispatcher.output()).toMatch(
      /re-enqueued \d+ claimed outbox row\(s\) whose job was missing from Redis/,
    );
    const report = orderingReport(h.observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    console.log(
      `redis flush: ${jobless} of ${claimed.length} claimed row(s) lost their jobs; all published ${recovered - flushed} ms later; ` +
        `${report.duplicates} duplicate notification(s)`,
    );
  });
});
