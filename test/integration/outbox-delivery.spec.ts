import { OutboxDelivery } from '@matchplane/outbox';
import { DispatcherMetrics } from '../../apps/dispatcher/src/dispatcher.metrics';
import {
  deliveryAttempts,
  outboxRow,
  outboxRows,
  sleep,
  useOutboxTestbed,
  type InProcessDispatcher,
  type RecorderSetup,
  type OutboxRowState,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * Every row is committed before the dispatcher boots, so nothing but the relay's poll claims a
 * row again after a failed attempt: retries (backoff 0) are at least one poll interval apart,
 * which is the window in which the other aggregates must get through.
 */
const POLL_MS = 300;
const MAX_ATTEMPTS = 3;

describe(`${OutboxDelivery.name} failures, in the dispatcher`, () => {
  const t = useOutboxTestbed();

  afterEach(() => t.closeDispatchers());

  const startDispatcher = (setup?: RecorderSetup): Promise<InProcessDispatcher> =>
    t.startDispatcher(
      {
        OUTBOX_POLL_INTERVAL_MS: String(POLL_MS),
        MAX_OUTBOX_DELIVERY_ATTEMPTS: String(MAX_ATTEMPTS),
        OUTBOX_RETRY_BASE_MS: '0',
        OUTBOX_RETRY_CAP_MS: '0',
      },
      setup,
    );

  const settled = (ids: readonly string[]) =>
    waitFor(
      async () => {
        const rows = await outboxRows(t.ds, ids);
        return rows.every((row) => row.status !== 'pending') ? rows : undefined;
      },
      { timeoutMs: 20_000, what: 'every row published or dead-lettered' },
    );

  const publishedAt = (row: OutboxRowState): number => {
    expect(row.status).toBe('published');
    return row.published_at!.getTime();
  };

  it('dead-letters a row that can never be delivered after exactly MAX_OUTBOX_DELIVERY_ATTEMPTS, while other aggregates are delivered meanwhile', async () => {
    const [poisoned, ...others] = await t.aggregates.add(9);
    // The poison is the oldest row of all: delivery in any global order would stall behind it.
    const poison = await t.aggregates.writePoison(poisoned!);
    await t.aggregates.advanceEach([poisoned!], 2);
    await t.aggregates.advanceEach(others, 3);

    const { recorder } = await startDispatcher();
    const rows = await settled([poisoned!, ...others]);

    const dead = await outboxRow(t.ds, poison.outboxId);
    expect(dead).toMatchObject({ status: 'dead', attempts: MAX_ATTEMPTS, claimed_at: null });
    expect(dead.last_error).toMatch(/^InvalidEnvelopeError: .*payload\.to/);
    const history = await deliveryAttempts(t.ds, poison.outboxId);
    expect(history.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
    expect(history.every((entry) => entry.error.startsWith('InvalidEnvelopeError'))).toBe(true);

    // Every other aggregate went through, in order and once each, before the poison's last attempt.
    const lastAttempt = history[MAX_ATTEMPTS - 1]!.attempted_at.getTime();
    for (const id of others) {
      expect(recorder.deliveredRevisions(id)).toEqual([1, 2, 3]);
      for (const row of rows.filter((r) => r.aggregate_id === id))
        expect(publishedAt(row)).toBeLessThan(lastAttempt);
    }
    // The poisoned aggregate moved on once its head was dead, in order.
    expect(recorder.deliveredRevisions(poisoned!)).toEqual([2, 3]);
    for (const row of rows.filter((r) => r.aggregate_id === poisoned && r.revision > 1)) {
      expect(publishedAt(row)).toBeGreaterThan(dead.dead_lettered_at!.getTime());
    }

    // A dead letter is never attempted again.
    await sleep(3 * POLL_MS);
    expect(await deliveryAttempts(t.ds, poison.outboxId)).toHaveLength(MAX_ATTEMPTS);
    expect((await outboxRow(t.ds, poison.outboxId)).status).toBe('dead');
  });

  it("defers a failing aggregate's later events until its head is dead-lettered, then delivers them in order; others are unaffected", async () => {
    const [failing, permanent, recovering, ...others] = await t.aggregates.add(8);
    const ids = [failing!, permanent!, recovering!, ...others];
    await t.aggregates.advanceEach(ids, 3);
    const { recorder, app } = await startDispatcher((r) => {
      r.failFor(failing!, 'transient', MAX_ATTEMPTS);
      r.failFor(permanent!, 'permanent', 1);
      r.failFor(recovering!, 'transient', MAX_ATTEMPTS - 1);
      // The eight heads' outcomes reach the dispatcher together: one settle statement for
      // failures, a dead letter and acks alike.
      r.holdFirst(ids.length);
    });
    const rows = await settled(ids);
    const batches = await app.get(DispatcherMetrics).settleBatchSize.get();
    const settledAtMost = (rows: number) =>
      batches.values.find(
        (value) => value.metricName?.endsWith('_bucket') && value.labels.le === rows,
      )?.value;
    expect(settledAtMost(4)).toBeLessThan(settledAtMost(8)!);
    const rowOf = (id: string, revision: number) =>
      rows.find((r) => r.aggregate_id === id && r.revision === revision)!;
    const outcomes = (id: string) =>
      recorder.callsOf(id).map((call) => `r${call.revision} ${call.outcome}`);

    // Nothing of the failing aggregate was handed over while its head was failing.
    expect(outcomes(failing!)).toEqual([
      'r1 transient',
      'r1 transient',
      'r1 transient',
      'r2 delivered',
      'r3 delivered',
    ]);
    const dead = rowOf(failing!, 1);
    expect(dead).toMatchObject({ status: 'dead', attempts: MAX_ATTEMPTS });
    expect(dead.last_error).toBe(`Error: recorder refuses ${failing} r1`);
    expect((await deliveryAttempts(t.ds, dead.id)).map((entry) => entry.attempt)).toEqual([
      1, 2, 3,
    ]);
    expect(publishedAt(rowOf(failing!, 2))).toBeGreaterThan(dead.dead_lettered_at!.getTime());
    expect(publishedAt(rowOf(failing!, 3))).toBeGreaterThan(publishedAt(rowOf(failing!, 2)));

    // A PermanentDeliveryError dead-letters at once.
    expect(outcomes(permanent!)).toEqual(['r1 permanent', 'r2 delivered', 'r3 delivered']);
    const permanentHead = rowOf(permanent!, 1);
    expect(permanentHead).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: `PermanentDeliveryError: recorder refuses ${permanent} r1`,
    });
    expect(await deliveryAttempts(t.ds, permanentHead.id)).toHaveLength(1);

    // Fewer failures than the limit: delivered on a retry, and the aggregate continues after it.
    expect(outcomes(recovering!)).toEqual([
      'r1 transient',
      'r1 transient',
      'r1 delivered',
      'r2 delivered',
      'r3 delivered',
    ]);
    expect(rowOf(recovering!, 1)).toMatchObject({
      status: 'published',
      attempts: MAX_ATTEMPTS - 1,
    });
    expect(await deliveryAttempts(t.ds, rowOf(recovering!, 1).id)).toHaveLength(MAX_ATTEMPTS - 1);

    // The others went straight through while the failing head waited for its retries.
    const failingLastAttempt = (await deliveryAttempts(t.ds, dead.id))[
      MAX_ATTEMPTS - 1
    ]!.attempted_at.getTime();
    for (const id of others) {
      expect(outcomes(id)).toEqual(['r1 delivered', 'r2 delivered', 'r3 delivered']);
      expect(publishedAt(rowOf(id, 3))).toBeLessThan(failingLastAttempt);
    }
  });
});
