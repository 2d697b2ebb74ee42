import { hostname } from 'node:os';
import {
  countByStatus,
  orderingReport,
  sleep,
  TestAggregates,
  useDispatcherProcesses,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

const AGGREGATES = 200;
const TRANSITIONS = 20;
/**
 * The default owner timeout (1.5 s) and claim lease (60 s): the survivor must take the dead
 * dispatcher's claims over through its silent heartbeat, long before the lease. The bound is a
 * correctness bound with a wide margin for a loaded machine; bench:outbox measures the stall.
 */
const TAKEOVER_BOUND_MS = 10_000;

describe('one of two dispatchers killed with SIGKILL', () => {
  const h = useDispatcherProcesses();

  it("the other delivers the dead one's claimed rows within seconds, not the 60 s lease; nothing lost, in order", async () => {
    const aggregates = await TestAggregates.create(h.db, h.redis, h.prefix);
    const ids = await aggregates.add(AGGREGATES);
    const doomed = await h.start({ OUTBOX_POLL_INTERVAL_MS: '100' });
    await h.start({ OUTBOX_POLL_INTERVAL_MS: '100' });
    const doomedOwner = async () => {
      const [row] = await h.ds.query<{ id: string }[]>(
        `SELECT id FROM outbox_dispatchers WHERE label = $1`,
        [`${hostname()}:${doomed.child.pid}`],
      );
      return row?.id;
    };
    const owner = await waitFor(doomedOwner, { what: 'the doomed dispatcher to register' });

    // Writers keep committing through the crash.
    const writing = aggregates.advanceEach(ids, TRANSITIONS);
    writing.catch(() => undefined); // awaited below; a failure surfaces there
    const held = () =>
      h.ds.query<{ id: string }[]>(
        `SELECT id FROM outbox WHERE status = 'pending' AND claimed_by = $1`,
        [owner],
      );
    const doomedPid = doomed.child.pid as number;
    const heldAtKill = await waitFor(
      async () => {
        // Frozen first, so the claims it holds cannot be settled between the read and the kill
        // (a claim lives only milliseconds). A statement it had sent before the freeze still
        // commits: it is given time to land before the read (well inside the 1.5 s owner
        // timeout), or a settle landing after the read would leave no claim to take over.
        process.kill(doomedPid, 'SIGSTOP');
        await sleep(200);
        const frozen = await held();
        if (frozen.length === 0) {
          process.kill(doomedPid, 'SIGCONT');
          return undefined;
        }
        expect(await doomed.stop('SIGKILL')).toBe('SIGKILL');
        return frozen;
      },
      { intervalMs: 5, what: 'the doomed dispatcher to hold claims' },
    );
    const killedAt = Date.now();
    expect(heldAtKill.length).toBeGreaterThan(0);

    await waitFor(
      async () => {
        const [left] = await h.ds.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM outbox WHERE id = ANY($1::bigint[]) AND status = 'pending'`,
          [heldAtKill.map((row) => row.id)],
        );
        return left!.count === 0 ? true : undefined;
      },
      {
        timeoutMs: TAKEOVER_BOUND_MS,
        intervalMs: 20,
        what: "the dead dispatcher's claimed rows to be delivered",
      },
    );
    const stallMs = Date.now() - killedAt;

    await writing;
    await waitFor(async () => ((await countByStatus(h.ds)).pending === 0 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'every committed row published',
    });
    expect(await countByStatus(h.ds)).toEqual({
      pending: 0,
      published: AGGREGATES * TRANSITIONS,
      dead: 0,
    });
    expect(orderingReport(h.observer.revisionsByAggregate(), ids, TRANSITIONS).violations).toEqual(
      [],
    );
    const survivor = h.running[1]!;
    expect(survivor.output()).toMatch(
      new RegExp(`took over \\d+ claim\\(s\\) of dispatcher\\(s\\) [^\\n]*${owner}`),
    );
    console.log(
      `takeover: ${heldAtKill.length} row(s) claimed by the killed dispatcher were delivered by the other ${stallMs} ms after the kill`,
    );
  });
});
