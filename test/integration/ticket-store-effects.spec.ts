import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import { runInTransaction } from '@matchplane/persistence';
import {
  type CandidateProjection,
  ticketExplanationKey,
  TicketStore,
  type StoredTicket,
} from '@matchplane/tickets';
import type { TestFactories } from '../support/factories';
import { ticketStoreHarness } from '../support/ticket-store-harness';

/**
 * A TicketStore write finishes itself: it registers the candidate projection's refresh (and, for a
 * ticket that left the queue, its explanation's removal) in the caller's unit of work, so the
 * caller does nothing after it, and a rolled-back write leaves Redis as it was.
 */
describe(`${TicketStore.name} after-commit effects`, () => {
  let harness: Awaited<ReturnType<typeof ticketStoreHarness>>;
  let dataSource: DataSource;
  let redis: Redis;
  let prefix: string;
  let tickets: TicketStore;
  let projection: CandidateProjection;
  let factories: TestFactories;

  beforeAll(async () => {
    harness = await ticketStoreHarness();
    ({ dataSource, redis, prefix, tickets, projection, factories } = harness);
  });

  afterAll(() => harness.close());

  const newTicket = async () => ({
    id: randomUUID(),
    playerId: await factories.player(),
    mode: 'duel',
    rating: 1500,
    predictedRtt: { 'eu-west': 20 },
  });

  const explain = (ticketId: string) =>
    redis.set(ticketExplanationKey(prefix, ticketId), JSON.stringify({ code: 'WAITING' }));
  const explained = async (ticketId: string) =>
    (await redis.exists(ticketExplanationKey(prefix, ticketId))) === 1;

  it('projects a created ticket once its transaction commits, with nothing done by the caller', async () => {
    const input = await newTicket();
    const created = await runInTransaction(dataSource, async (manager, unit) => {
      const { ticket } = await tickets.create(unit, input, new Date());
      // Registered, not run: the transaction has not committed.
      expect(await projection.candidate(ticket.id)).toBeUndefined();
      return ticket;
    });
    expect(await projection.candidate(created.id)).toMatchObject({
      ticketId: created.id,
      state: 'SEARCHING',
      version: created.version,
    });
    expect((await projection.candidates('duel')).map((c) => c.ticketId)).toContain(created.id);
  });

  it('projects nothing when the transaction rolls back', async () => {
    const input = await newTicket();
    await expect(
      runInTransaction(dataSource, async (manager, unit) => {
        await tickets.create(unit, input, new Date());
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await projection.candidate(input.id)).toBeUndefined();
  });

  it('takes a ticket that left the queue out of the pool and drops its explanation, on commit only', async () => {
    const created = await factories.searchingTicket(await factories.player());
    await explain(created.id);
    const cancel = (current: StoredTicket) =>
      runInTransaction(dataSource, async (manager, unit) =>
        tickets.transition(
          unit,
          current,
          { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
          new Date(),
        ),
      );

    await expect(
      runInTransaction(dataSource, async (manager, unit) => {
        await tickets.transition(
          unit,
          created,
          { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
          new Date(),
        );
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await projection.candidate(created.id))?.state).toBe('SEARCHING');
    expect(await explained(created.id)).toBe(true);

    await cancel(created);
    expect(await projection.candidate(created.id)).toBeUndefined();
    expect((await projection.candidates('duel')).map((c) => c.ticketId)).not.toContain(created.id);
    expect(await explained(created.id)).toBe(false);
  });

  it('keeps the explanation of a ticket still searching', async () => {
    const created = await factories.searchingTicket(await factories.player());
    await explain(created.id);
    await runInTransaction(dataSource, async (manager, unit) =>
      tickets.applyLatency(unit, created.playerId, 'us-east', 80),
    );
    expect((await projection.candidate(created.id))?.predictedRtt).toEqual({
      'eu-west': 20,
      'us-east': 80,
    });
    expect(await explained(created.id)).toBe(true);
  });

  it('refreshes the candidates a heartbeat batch wrote, in one pipeline, without holding up the caller', async () => {
    const first = await factories.searchingTicket(await factories.player());
    const second = await factories.searchingTicket(await factories.player());
    const beatAt = new Date(Date.now() + 5_000);
    const beaten = await runInTransaction(dataSource, async (manager, unit) =>
      tickets.heartbeatMany(
        unit,
        [first, second].map((ticket) => ({ ticketId: ticket.id, playerId: ticket.playerId })),
        beatAt,
      ),
    );
    expect(beaten.size).toBe(2);
    const deadline = Date.now() + 2_000;
    let seen: (Date | undefined)[] = [];
    while (Date.now() < deadline) {
      seen = await Promise.all(
        [first, second].map(
          async (ticket) => (await projection.candidate(ticket.id))?.lastHeartbeatAt,
        ),
      );
      if (seen.every((at) => at?.getTime() === beatAt.getTime())) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toEqual([beatAt, beatAt]);
  });

  it('re-projects tickets from their rows on demand (a candidate found misstated)', async () => {
    const created = await factories.searchingTicket(await factories.player());
    await redis.del(projection.candidateKey(created.id));
    expect(await projection.candidate(created.id)).toBeUndefined();
    await tickets.reproject(dataSource.manager, [created.id, created.id]);
    expect((await projection.candidate(created.id))?.state).toBe('SEARCHING');
  });
});
