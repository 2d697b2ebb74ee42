import type { DataSource } from 'typeorm';
import { MetricsRegistry } from '@matchplane/observability';
import { DispatcherLease } from '../../apps/dispatcher/src/dispatcher.lease';
import {
  countByStatus,
  installFault,
  orderingReport,
  removeFault,
  sleep,
  useOutboxTestbed,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * A dispatcher whose heartbeat fails (a trigger refuses its row's updates, as a database that
 * cannot reach it would) keeps its claims but must not hand them to subscribers once it can no
 * longer prove that nobody took them over: it parks them, and after its next heartbeat delivers
 * those still its own and drops the ones another dispatcher took meanwhile.
 */
const OWNER_TIMEOUT_MS = 1_500;

function silence(ds: DataSource, owner: string): Promise<void> {
  return installFault(ds, {
    name: 'test_refuse_heartbeat',
    table: 'outbox_dispatchers',
    when: `NEW.id = '${owner}'`,
    message: `heartbeat of ${owner} refused`,
  });
}

function restore(ds: DataSource): Promise<void> {
  return removeFault(ds, 'test_refuse_heartbeat', 'outbox_dispatchers');
}

describe('the hand-off guard of a dispatcher whose heartbeat fails', () => {
  const t = useOutboxTestbed();

  afterEach(async () => {
    await t.closeDispatchers();
    await restore(t.ds);
  });

  async function start(): Promise<InProcessDispatcher & { owner: string }> {
    const dispatcher = await t.startDispatcher({
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_OWNER_TIMEOUT_MS: String(OWNER_TIMEOUT_MS),
    });
    return { ...dispatcher, owner: dispatcher.app.get(DispatcherLease).id };
  }

  /** The claimed rows `dispatcher` still holds, from its own gauge. */
  async function rowsHeldBy(dispatcher: InProcessDispatcher): Promise<number | undefined> {
    const gauge = dispatcher.app.get(MetricsRegistry).getSingleMetric('outbox_dispatcher_rows');
    const values = (await gauge?.get())?.values ?? [];
    return values.find((value) => value.labels.state === 'held')?.value;
  }

  const delivered = () =>
    waitFor(async () => ((await countByStatus(t.ds)).pending === 0 ? true : undefined), {
      what: 'every row delivered',
    });

  it('claims but hands over nothing while its heartbeat fails, and delivers those claims once it beats again', async () => {
    const { ds, aggregates } = t;
    const a = await start();
    await silence(ds, a.owner);
    // Past the proof of its last heartbeat (3/4 of the owner timeout), though not yet presumed dead.
    await sleep(OWNER_TIMEOUT_MS);
    const ids = await aggregates.add(5);
    await aggregates.advanceEach(ids, 1);
    await waitFor(
      async () => {
        const [row] = await ds.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM outbox WHERE claimed_by = $1 AND status = 'pending'`,
          [a.owner],
        );
        return row!.count === ids.length ? true : undefined;
      },
      { what: 'the rows claimed by the silent dispatcher' },
    );
    await sleep(500);
    expect(a.recorder.calls).toEqual([]);

    await restore(ds);
    await delivered();
    expect(ids.map((id) => a.recorder.deliveredRevisions(id))).toEqual(ids.map(() => [1]));
  });

  it('drops, without handing them over, the claims another dispatcher took while its heartbeat failed', async () => {
    const { ds, aggregates } = t;
    const a = await start();
    await silence(ds, a.owner);
    await sleep(OWNER_TIMEOUT_MS * 0.8);
    const ids = await aggregates.add(5);
    await aggregates.advanceEach(ids, 3);
    await waitFor(
      async () => {
        const [row] = await ds.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM outbox WHERE claimed_by = $1 AND status = 'pending'`,
          [a.owner],
        );
        return row!.count === ids.length ? true : undefined;
      },
      { what: 'the rows claimed by the silent dispatcher' },
    );
    // B takes them over once A's heartbeat is older than the owner timeout, and delivers all.
    const b = await start();
    await delivered();
    await restore(ds);
    // A's heartbeat is back: it renews its parked claims, finds them taken, and lets them go.
    await waitFor(async () => ((await rowsHeldBy(a)) === 0 ? true : undefined), {
      what: 'the formerly silent dispatcher to let its parked claims go',
    });
    // (Nest's static Logger writes to the logger of the app created last, here B's.)
    expect([...a.logs, ...b.logs]).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `${ids.length} claim\\(s\\) were taken over while this dispatcher could not prove its heartbeat; not delivered here`,
        ),
      ),
    );

    expect(a.recorder.calls).toEqual([]);
    const seen = new Map(ids.map((id) => [id, b.recorder.deliveredRevisions(id)]));
    expect(orderingReport(seen, ids, 3).violations).toEqual([]);
    expect([...a.logs, ...b.logs]).toContainEqual(
      expect.stringMatching(
        new RegExp(`took over ${ids.length} claim\\(s\\) of dispatcher\\(s\\) ${a.owner}`),
      ),
    );
  });
});
