import { randomUUID } from 'node:crypto';
import {
  OutboxDispatchersRepository,
  OutboxRepository,
  SETTLE_DELIVERED_SQL,
  SETTLE_SQL,
  type ClaimLiveness,
  type ClaimStamp,
  type ClaimedRow,
  type DeliveryResult,
} from '@matchplane/outbox';
import { deliveryAttempts, outboxRow, sleep, useOutboxTestbed } from '../support/outbox-fixtures';
import { StatementCounter } from '../support/statement-counter';

/*
 * The claim statements as two dispatchers see them: each registers in outbox_dispatchers and
 * beats (or stops beating) through the repository, and the rows come from the production writer.
 * The owner timeout is short so that "dead" takes a fraction of a second.
 */
const OWNER_TIMEOUT_MS = 400;
const LIVENESS: ClaimLiveness = { leaseMs: 60_000, ownerTimeoutMs: OWNER_TIMEOUT_MS };
const MAX_ATTEMPTS = 5;

describe(`${OutboxRepository.name} claims`, () => {
  const t = useOutboxTestbed();
  let outbox: OutboxRepository;
  let dispatchers: OutboxDispatchersRepository;

  beforeAll(() => {
    outbox = new OutboxRepository(t.ds);
    dispatchers = new OutboxDispatchersRepository(t.ds);
  });

  /** A registered dispatcher with a fresh heartbeat. */
  async function dispatcher(): Promise<{
    owner: string;
    stamp: () => ClaimStamp;
    beat: () => Promise<void>;
  }> {
    const owner = randomUUID();
    const beat = () => dispatchers.beat(owner, `test:${owner.slice(0, 8)}`);
    await beat();
    return { owner, stamp: () => ({ token: randomUUID(), owner }), beat };
  }

  /** Claims until the aggregate's head comes back (other tests' rows may come first). */
  async function claimHeadOf(aggregateId: string, stamp: ClaimStamp, liveness = LIVENESS) {
    const claimed = await outbox.claimHeads(1_000, stamp, liveness);
    return claimed.find((row) => row.aggregate_id === aggregateId);
  }

  const delivered = (row: ClaimedRow, token = row.claim_token): DeliveryResult => ({
    id: row.id,
    token,
    delivered: true,
  });

  it('leaves a live owner’s claim alone, and takes it over with a fresh token once the owner’s heartbeat is older than the owner timeout', async () => {
    const [id] = await t.aggregates.add(1);
    await t.aggregates.advanceEach([id!], 2);
    const a = await dispatcher();
    const b = await dispatcher();

    const claimedByA = await claimHeadOf(id!, a.stamp());
    expect(claimedByA).toMatchObject({ revision: '1', claimed_by: a.owner, previous_owner: null });

    // A beats on: B gets nothing of this aggregate, not even its next revision.
    await sleep(OWNER_TIMEOUT_MS / 2);
    await a.beat();
    await sleep(OWNER_TIMEOUT_MS / 2);
    await b.beat();
    expect(await claimHeadOf(id!, b.stamp())).toBeUndefined();

    // A falls silent: its claim is B's on the next pass, under B's token.
    await sleep(OWNER_TIMEOUT_MS + 100);
    await b.beat();
    const stampOfB = b.stamp();
    const takenOver = await claimHeadOf(id!, stampOfB);
    expect(takenOver).toMatchObject({
      id: claimedByA!.id,
      claimed_by: b.owner,
      claim_token: stampOfB.token,
      previous_owner: a.owner,
    });
  });

  it('refuses the ack of a claim that was taken over: the row stays with its new owner, and the stale owner claims no successor', async () => {
    const [id] = await t.aggregates.add(1);
    await t.aggregates.advanceEach([id!], 3);
    const a = await dispatcher();
    const b = await dispatcher();
    const stale = (await claimHeadOf(id!, a.stamp()))!;
    await sleep(OWNER_TIMEOUT_MS + 100);
    await b.beat();
    const current = (await claimHeadOf(id!, b.stamp()))!;
    expect(current.id).toBe(stale.id);

    // A comes back and settles what it delivered under its old claim.
    const refused = await outbox.settle([delivered(stale)], a.stamp(), {
      maxAttempts: MAX_ATTEMPTS,
    });
    expect(refused).toEqual({ published: [], failed: [], refused: [stale.id], successors: [] });
    expect(await outboxRow(t.ds, stale.id)).toMatchObject({
      status: 'pending',
      claimed_at: current.claimed_at,
    });
    const [holder] = await t.ds.query<{ claimed_by: string }[]>(
      `SELECT claimed_by FROM outbox WHERE id = $1`,
      [stale.id],
    );
    expect(holder?.claimed_by).toBe(b.owner);

    // Its failure record is refused the same way: no attempt counted against the row.
    const failure = await outbox.settle(
      [
        {
          ...delivered(stale),
          delivered: false,
          error: 'Error: late',
          permanent: true,
          retryDelayMs: 0,
        },
      ],
      a.stamp(),
      { maxAttempts: MAX_ATTEMPTS },
    );
    expect(failure.refused).toEqual([stale.id]);
    expect(await outboxRow(t.ds, stale.id)).toMatchObject({
      status: 'pending',
      attempts: 0,
      last_error: null,
    });
    expect(await deliveryAttempts(t.ds, stale.id)).toEqual([]);

    // The new owner's ack goes through and claims revision 2 for it.
    const next = b.stamp();
    const settled = await outbox.settle([delivered(current)], next, { maxAttempts: MAX_ATTEMPTS });
    expect(settled.published).toEqual([current.id]);
    expect(
      settled.successors.map((row) => [row.revision, row.claimed_by, row.claim_token]),
    ).toEqual([['2', b.owner, next.token]]);
  });

  it('settles an all-delivered batch with the statement without failure branches, and a batch with a failure with the whole one', async () => {
    // The delivered-only statement plans in about half the time (docs/BENCHMARKS.md, issue 33).
    const counter = new StatementCounter(t.ds);
    const sent = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 120);
    try {
      const [first, second] = await t.aggregates.add(2);
      await t.aggregates.advanceEach([first!, second!], 1);
      const a = await dispatcher();
      const heads = (await outbox.claimHeads(1_000, a.stamp(), LIVENESS)).filter((row) =>
        [first, second].includes(row.aggregate_id),
      );
      const [headOfFirst, headOfSecond] = [first, second].map((aggregateId) =>
        heads.find((row) => row.aggregate_id === aggregateId)!,
      );
      const allDelivered = await counter.during(() =>
        outbox.settle([delivered(headOfFirst!)], undefined, { maxAttempts: MAX_ATTEMPTS }),
      );
      expect(allDelivered.result.published).toEqual([headOfFirst!.id]);
      expect(allDelivered.statements).toEqual([sent(SETTLE_DELIVERED_SQL)]);
      const withFailure = await counter.during(() =>
        outbox.settle(
          [
            {
              ...delivered(headOfSecond!),
              delivered: false,
              error: 'Error: busy',
              permanent: false,
              retryDelayMs: 60_000,
            },
          ],
          undefined,
          { maxAttempts: MAX_ATTEMPTS },
        ),
      );
      expect(withFailure.result.failed.map((row) => row.id)).toEqual([headOfSecond!.id]);
      expect(withFailure.statements).toEqual([sent(SETTLE_SQL)]);
    } finally {
      counter.stop();
    }
  });

  it('counts a failure and dead-letters at the limit in the same statement as the acks, claiming the successor of a dead head', async () => {
    const [ok, failing, poisoned] = await t.aggregates.add(3);
    await t.aggregates.advanceEach([ok!, failing!, poisoned!], 2);
    const a = await dispatcher();
    const stamp = a.stamp();
    const heads = (await outbox.claimHeads(1_000, stamp, LIVENESS)).filter((row) =>
      [ok, failing, poisoned].includes(row.aggregate_id),
    );
    const head = (aggregateId: string) => heads.find((row) => row.aggregate_id === aggregateId)!;
    const next = a.stamp();

    const settlement = await outbox.settle(
      [
        delivered(head(ok!)),
        {
          ...delivered(head(failing!)),
          delivered: false,
          error: 'Error: busy',
          permanent: false,
          retryDelayMs: 60_000,
        },
        {
          ...delivered(head(poisoned!)),
          delivered: false,
          error: 'PermanentDeliveryError: never',
          permanent: true,
          retryDelayMs: 0,
        },
      ],
      next,
      { maxAttempts: MAX_ATTEMPTS },
    );

    expect(settlement.published).toEqual([head(ok!).id]);
    expect(settlement.failed.sort((x, y) => Number(x.id) - Number(y.id))).toEqual(
      [
        { id: head(failing!).id, attempts: 1, deadLettered: false },
        { id: head(poisoned!).id, attempts: 1, deadLettered: true },
      ].sort((x, y) => Number(x.id) - Number(y.id)),
    );
    // Successors of the acked head and of the dead one; the failing aggregate waits for its retry.
    expect(settlement.successors.map((row) => [row.aggregate_id, row.revision]).sort()).toEqual(
      [
        [ok, '2'],
        [poisoned, '2'],
      ].sort(),
    );
    expect(await outboxRow(t.ds, head(failing!).id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'Error: busy',
      claimed_at: null,
    });
    expect((await deliveryAttempts(t.ds, head(poisoned!).id)).map((entry) => entry.error)).toEqual([
      'PermanentDeliveryError: never',
    ]);
  });

  it('never takes its own claim from itself, even with its heartbeat silent, until the lease', async () => {
    const [id] = await t.aggregates.add(1);
    await t.aggregates.advance(id!);
    const a = await dispatcher();
    const short: ClaimLiveness = { leaseMs: 1_000, ownerTimeoutMs: OWNER_TIMEOUT_MS };
    const first = (await claimHeadOf(id!, a.stamp(), short))!;
    await sleep(OWNER_TIMEOUT_MS + 100);
    expect(await claimHeadOf(id!, a.stamp(), short)).toBeUndefined();
    await sleep(1_000 - OWNER_TIMEOUT_MS);
    expect(await claimHeadOf(id!, a.stamp(), short)).toMatchObject({
      id: first.id,
      previous_owner: a.owner,
    });
  });

  it('takes a claim over after the lease even while its owner beats (the backstop)', async () => {
    const [id] = await t.aggregates.add(1);
    await t.aggregates.advance(id!);
    const a = await dispatcher();
    const b = await dispatcher();
    const short: ClaimLiveness = { leaseMs: 300, ownerTimeoutMs: 60_000 };
    const first = (await claimHeadOf(id!, a.stamp(), short))!;
    expect(await claimHeadOf(id!, b.stamp(), short)).toBeUndefined();
    await sleep(400);
    await a.beat();
    expect(await claimHeadOf(id!, b.stamp(), short)).toMatchObject({
      id: first.id,
      claimed_by: b.owner,
      previous_owner: a.owner,
    });
  });

  it('renews only the claims still held under their token', async () => {
    const [lost, kept] = await t.aggregates.add(2);
    await t.aggregates.advance(lost!);
    const a = await dispatcher();
    const b = await dispatcher();
    const lostClaim = (await claimHeadOf(lost!, a.stamp()))!;
    // A falls silent and B takes its claim over; then A beats again and claims another head.
    await sleep(OWNER_TIMEOUT_MS + 100);
    await b.beat();
    expect(await claimHeadOf(lost!, b.stamp())).toMatchObject({
      id: lostClaim.id,
      previous_owner: a.owner,
    });
    await a.beat();
    await t.aggregates.advance(kept!);
    const keptClaim = (await claimHeadOf(kept!, a.stamp()))!;

    const claims = [lostClaim, keptClaim].map((row) => ({ id: row.id, token: row.claim_token }));
    expect(await outbox.renewClaims(claims)).toEqual([keptClaim.id]);
    expect((await outboxRow(t.ds, keptClaim.id)).claimed_at!.getTime()).toBeGreaterThan(
      keptClaim.claimed_at.getTime(),
    );
  });
});
