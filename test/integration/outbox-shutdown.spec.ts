import { DispatcherLease } from '../../apps/dispatcher/src/dispatcher.lease';
import { allowAck, outboxRow, refuseAck, useOutboxTestbed } from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';

/*
 * A dispatcher shut down cleanly deletes its registration, so the claims it still holds (here an
 * ack the database keeps refusing) are taken over at the next claim pass, not after its silence
 * reaches the owner timeout, which is long here (10 s) to tell the two apart.
 */
const OWNER_TIMEOUT_MS = 10_000;

describe('a dispatcher shut down cleanly', () => {
  const t = useOutboxTestbed();

  const start = () =>
    t.startDispatcher({
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_OWNER_TIMEOUT_MS: String(OWNER_TIMEOUT_MS),
    });

  it('hands the claims it could not settle to the others at once', async () => {
    const { ds, aggregates } = t;
    const [id] = await aggregates.add(1);
    const written = await aggregates.advance(id!);
    const outboxId = await aggregates.outboxIdOf(written);
    await refuseAck(ds, outboxId);

    const a = await start();
    const owner = a.app.get(DispatcherLease).id;
    await waitFor(
      () => Promise.resolve(a.recorder.deliveredRevisions(id!).length > 0 ? true : undefined),
      {
        what: 'the first dispatcher to deliver the row it cannot ack',
      },
    );
    const b = await start();
    expect(
      (
        await ds.query<{ claimed_by: string }[]>(`SELECT claimed_by FROM outbox WHERE id = $1`, [
          outboxId,
        ])
      )[0]?.claimed_by,
    ).toBe(owner);

    const closing = Date.now();
    await a.close();
    expect(await ds.query(`SELECT id FROM outbox_dispatchers WHERE id = $1`, [owner])).toEqual([]);
    await waitFor(
      () => Promise.resolve(b.recorder.deliveredRevisions(id!).length > 0 ? true : undefined),
      {
        timeoutMs: OWNER_TIMEOUT_MS / 2,
        intervalMs: 20,
        what: 'the other dispatcher to take the claim over',
      },
    );
    const takenOverMs = Date.now() - closing;

    await allowAck(ds);
    await waitFor(
      async () => ((await outboxRow(ds, outboxId)).status === 'published' ? true : undefined),
      {
        what: 'the row acked by the other dispatcher',
      },
    );
    expect(takenOverMs).toBeLessThan(OWNER_TIMEOUT_MS / 2);
    console.log(
      `shutdown: the claim was delivered by the other dispatcher ${takenOverMs} ms after close() began`,
    );
  });
});
