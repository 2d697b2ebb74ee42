import { OutboxRepository } from '@matchplane/outbox';
import {
  allowAck,
  deliveryAttempts,
  outboxRow,
  outboxRows,
  refuseAck,
  sleep,
  useOutboxTestbed,
} from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * The ack (`settle`) is made to fail for one row by a trigger (`refuseAck`), the way a database
 * fault would surface: the subscribers have the event, PostgreSQL refuses to record it.
 */
describe(`an ack failure (${OutboxRepository.name}.settle) in the dispatcher`, () => {
  const t = useOutboxTestbed();

  it("stops the aggregate's run: its next event waits while the ack keeps failing, the other rows of its settle batch go through, and it flows once the ack succeeds", async () => {
    const { aggregates, ds } = t;
    const [stuck, ...others] = await aggregates.add(5);
    const [first] = await aggregates.advanceEach([stuck!], 3);
    const headId = await aggregates.outboxIdOf(first!);
    await aggregates.advanceEach(others, 3);
    await refuseAck(ds, headId);

    // Every head is due when it starts: one claim, and the five results settle together (the
    // recorder releases them at once), so the refused ack fails the others' statement too until
    // they are settled apart from it.
    const { recorder, logs } = await t.startDispatcher(
      { OUTBOX_POLL_INTERVAL_MS: '100', OUTBOX_CLAIM_LEASE_MS: '60000' },
      (r) => r.holdFirst(5),
    );
    const ackFailures = () =>
      logs.filter((line) =>
        new RegExp(
          `ack of outbox ${headId} \\(.*r1\\) failed, its aggregate waits; retry \\d+ in \\d+ ms: .*test fault: ack of outbox ${headId} refused`,
        ).test(line),
      ).length;

    // The ack is retried (the claim kept); the row is not handed over again meanwhile.
    await waitFor(() => Promise.resolve(ackFailures() >= 3 ? true : undefined), {
      what: 'three refused acks of the head',
    });
    for (const id of others) {
      await waitFor(
        () => Promise.resolve(recorder.deliveredRevisions(id).length === 3 ? true : undefined),
        {
          what: `the other aggregate ${id} delivered`,
        },
      );
    }
    await sleep(500);
    // Only the refused row waits: no other row's ack failed along with it.
    expect(logs.filter((line) => /ack of outbox \d+ .* failed/.test(line)).length).toBe(
      ackFailures(),
    );
    expect(recorder.deliveredRevisions(stuck!)).toEqual([1]);
    // A database failure is not the event's fault: it is not counted against the row.
    const held = await outboxRow(ds, headId);
    expect(held).toMatchObject({ status: 'pending', attempts: 0, last_error: null });
    expect(held.claimed_at).not.toBeNull();
    expect(await deliveryAttempts(ds, headId)).toEqual([]);
    expect((await outboxRows(ds, [stuck!])).map((row) => row.status)).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    for (const id of others) {
      expect(recorder.deliveredRevisions(id)).toEqual([1, 2, 3]);
      expect((await outboxRows(ds, [id])).map((row) => row.status)).toEqual([
        'published',
        'published',
        'published',
      ]);
    }

    await allowAck(ds);
    await waitFor(
      async () =>
        (await outboxRows(ds, [stuck!])).every((row) => row.status === 'published')
          ? true
          : undefined,
      { what: 'the stuck aggregate to be delivered once the ack succeeds' },
    );
    // Delivered once, acked late, then the rest of the run in order.
    expect(recorder.deliveredRevisions(stuck!)).toEqual([1, 2, 3]);
    expect(await outboxRow(ds, headId)).toMatchObject({ status: 'published', attempts: 0 });
  });
});
