import {
  countByStatus,
  orderingReport,
  sleep,
  TestAggregates,
  useDispatcherProcesses,
} from '../support/outbox-fixtures';
import { waitFor, type RunningApp } from '../support/processes';

const AGGREGATES = 100;
const BACKLOG = 15;
const TRANSITIONS = 20;
/**
 * The claim lease is the default 60 s: the restarted dispatcher takes the dead one's claims over
 * because its heartbeat is silent (1.5 s), with a wide margin for a loaded machine.
 */
const RECOVERY_BOUND_MS = 10_000;

describe('a dispatcher killed mid-batch', () => {
  const h = useDispatcherProcesses();

  const startDispatcher = () => h.start({ OUTBOX_POLL_INTERVAL_MS: '100' });

  /**
   * SIGKILLs the dispatcher at a moment it holds claims it has not acked: frozen (SIGSTOP) until
   * its claimed rows are seen still pending, else let go for a moment and tried again. A kill
   * timed by the clock alone could land between two batches, with nothing in flight to recover.
   */
  async function killHoldingClaims(app: RunningApp): Promise<{ id: string }[]> {
    for (let attempt = 0; attempt < 500; attempt += 1) {
      app.child.kill('SIGSTOP');
      const claimed = await h.ds.query<{ id: string }[]>(
        `SELECT id FROM outbox WHERE status = 'pending' AND claimed_at IS NOT NULL`,
      );
      if (claimed.length > 0) {
        expect(await app.stop('SIGKILL')).toBe('SIGKILL');
        return claimed;
      }
      app.child.kill('SIGCONT');
      await sleep(2);
    }
    throw new Error('the dispatcher held no claim in 500 looks');
  }

  it('loses nothing when killed with SIGKILL and restarted: every committed row ends published or dead, in order per aggregate', async () => {
    const aggregates = await TestAggregates.create(h.db, h.redis, h.prefix);
    const ids = await aggregates.add(AGGREGATES);
    await aggregates.advanceEach(ids, BACKLOG);

    const first = await startDispatcher();
    // More commits while it works, through the crash and the restart.
    const writing = aggregates.advanceEach(ids, TRANSITIONS - BACKLOG);
    writing.catch(() => undefined); // awaited below; a failure surfaces there
    await waitFor(() => Promise.resolve(h.observer.received.length >= 300 ? true : undefined), {
      what: '300 notifications before the crash',
    });
    const inFlight = await killHoldingClaims(first);
    // The crash left claims behind: rows handed to the dead process and never acked.
    expect(inFlight.length).toBeGreaterThan(0);
    const notifiedBeforeCrash = h.observer.received.length;

    const restarted = Date.now();
    await startDispatcher();
    await waitFor(
      async () => {
        const [left] = await h.ds.query<{ count: number }[]>(
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
    await waitFor(async () => ((await countByStatus(h.ds)).pending === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'every committed row published or dead-lettered',
    });

    expect(await countByStatus(h.ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    const report = orderingReport(h.observer.revisionsByAggregate(), ids, TRANSITIONS);
    expect(report.violations).toEqual([]);
    console.log(
      `crash: killed after ${notifiedBeforeCrash} notifications with ${inFlight.length} claimed row(s) in flight; ` +
        `those delivered ${recovered - restarted} ms after the restart; ${report.duplicates} duplicate notification(s)`,
    );
  });
});
