import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import { loadConfig, matcherShardPlan, ServiceConfig } from '@matchplane/config';
import {
  BackfillStore,
  MatchLifecycle,
  MatchPresenceService,
  MatchStore,
  type BackfillRecord,
} from '@matchplane/matches';
import { OutboxSignal, OutboxWriter, outboxWakeChannel } from '@matchplane/outbox';
import { runInTransaction, type UnitOfWork } from '@matchplane/persistence';
import { MatchRatingChanges, PlayerRatings, PlayerStore } from '@matchplane/players';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

/**
 * The writers of events other than TicketStore finish their own writes too: each registers the
 * relay's wake-up in the caller's unit of work, so it goes out once the transaction committed (the
 * event already visible to the relay's connection), and never for a rolled-back write.
 */
describe('wake-up registered by the event writers (MatchStore, BackfillStore, PlayerRatings, MatchPresenceService)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let redis: Redis;
  let listener: Redis;
  let prefix: string;
  let signal: OutboxSignal;
  let matches: MatchStore;
  let backfills: BackfillStore;
  let ratings: PlayerRatings;
  let presence: MatchPresenceService;
  let factories: TestFactories;
  const published: string[] = [];
  /** For each wake-up, in order: the aggregate's events another connection saw at that moment. */
  let wakes: Promise<number>[] = [];
  let aggregateId = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await db.dataSource();
    redis = testRedis();
    listener = testRedis();
    prefix = testRedisPrefix();
    listener.on('message', (channel: string) => published.push(channel));
    await listener.subscribe(outboxWakeChannel(prefix));
    const config = loadConfig(ServiceConfig, { ...db.env, REDIS_KEY_PREFIX: prefix });
    signal = new OutboxSignal(redis, config);
    const publish = signal.committed.bind(signal);
    jest.spyOn(signal, 'committed').mockImplementation(() => {
      wakes.push(eventsOf(aggregateId));
      publish();
    });
    const outbox = new OutboxWriter();
    const projection = new CandidateProjection(redis, config, config, matcherShardPlan(config));
    const tickets = new TicketStore(outbox, signal, projection);
    matches = new MatchStore(dataSource, outbox, signal);
    backfills = new BackfillStore(outbox, signal);
    ratings = new PlayerRatings(outbox, signal, new MatchRatingChanges());
    const lifecycle = new MatchLifecycle(
      dataSource,
      matches,
      tickets,
      new PlayerStore(),
      backfills,
    );
    presence = new MatchPresenceService(dataSource, matches, lifecycle, outbox, signal);
    factories = TestFactories.standalone(dataSource, signal, projection);
  });

  afterAll(async () => {
    listener.disconnect();
    redis.disconnect();
    await deleteRedisPrefix(prefix);
    await db.drop();
  });

  const eventsOf = async (id: string) =>
    id === ''
      ? 0
      : (
          await dataSource.query<{ n: number }[]>(
            `SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = $1`,
            [id],
          )
        )[0]!.n;

  /** Watches the wake-ups of `id`'s events from now on (the fixtures' own are forgotten). */
  const watch = async (id: string) => {
    aggregateId = id;
    wakes = [];
    published.length = 0;
    return eventsOf(id);
  };

  /** The wake-up is the real publish (a fixture's coalesced one may follow it: not counted). */
  const reachedRedis = async () => {
    const deadline = Date.now() + 2_000;
    while (published.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(published).toContain(outboxWakeChannel(prefix));
  };

  /**
   * `write` in a transaction that commits: no wake-up while it is open, one once it committed,
   * which saw the written events and reached Redis. Then `write` again in one that rolls back:
   * no wake-up.
   */
  async function expectWakeAfterCommitOnly(
    id: string,
    write: (unit: UnitOfWork) => Promise<unknown>,
    rolledBack: (unit: UnitOfWork) => Promise<unknown> = write,
  ): Promise<void> {
    const before = await watch(id);
    await runInTransaction(dataSource, async (manager, unit) => {
      await write(unit);
      expect(wakes).toHaveLength(0);
    });
    expect(wakes).toHaveLength(1);
    expect(await wakes[0]).toBeGreaterThan(before);
    await reachedRedis();

    await watch(id);
    await expect(
      runInTransaction(dataSource, async (manager, unit) => {
        await rolledBack(unit);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(wakes).toHaveLength(0);
  }

  /** A duel in progress and its two players. */
  const runningDuel = async () => {
    const { matchId } = await factories.duel();
    await factories.advanceMatch(matchId, 'IN_PROGRESS');
    return (await matches.load(undefined, matchId))!;
  };

  const openBackfill = (unit: UnitOfWork, matchId: string, team = 0) =>
    backfills.open(
      unit,
      {
        matchId,
        mode: 'duel',
        team,
        slots: 1,
        serverRegion: 'eu-west',
        teamRating: 1500,
        attributes: {},
        expiresAt: new Date(Date.now() + 60_000),
      },
      new Date(),
    );

  /** A new player's searching ticket, as a one-player roster for team 0. */
  const searchingPlayer = async () => {
    const ticket = await factories.searchingTicket(await factories.player());
    return [{ playerId: ticket.playerId, ticketId: ticket.id, team: 0, rating: 1500 }];
  };

  describe(MatchStore.name, () => {
    it('create: wakes the relay once the match is committed, not for a rolled-back one', async () => {
      const id = randomUUID();
      const first = await searchingPlayer();
      const second = await searchingPlayer();
      await expectWakeAfterCommitOnly(
        id,
        (unit) =>
          matches.create(unit, { id, mode: 'duel', region: 'eu-west', participants: first }),
        (unit) =>
          matches.create(unit, {
            id: randomUUID(),
            mode: 'duel',
            region: 'eu-west',
            participants: second,
          }),
      );
    });

    it('transition: wakes the relay once the transition is committed, not for a rolled-back one', async () => {
      const { matchId } = await factories.duel();
      await expectWakeAfterCommitOnly(
        matchId,
        (unit) => matches.transition(unit, matchId, { to: 'PROCESS_READY' }),
        (unit) => matches.transition(unit, matchId, { to: 'ASSIGNMENT_READY' }),
      );
    });

    it('addParticipants: wakes the relay once the added players are committed, not for a rolled-back backfill', async () => {
      const match = await runningDuel();
      const request = await runInTransaction(dataSource, (manager, unit) =>
        openBackfill(unit, match.id),
      );
      const first = await searchingPlayer();
      const second = await searchingPlayer();
      await expectWakeAfterCommitOnly(
        match.id,
        (unit) => matches.addParticipants(unit, match, first, request.id, new Date()),
        async (unit) =>
          matches.addParticipants(
            unit,
            (await matches.load(unit.manager, match.id))!,
            second,
            request.id,
            new Date(),
          ),
      );
    });

    it('transitionNow: wakes the relay once its own write is committed', async () => {
      const { matchId } = await factories.duel();
      const before = await watch(matchId);
      await matches.transitionNow(matchId, { to: 'PROCESS_READY' });
      expect(wakes).toHaveLength(1);
      expect(await wakes[0]).toBe(before + 1);
      await reachedRedis();
    });
  });

  describe(BackfillStore.name, () => {
    it('open and transition: wake the relay once the request is committed, not for a rolled-back one', async () => {
      const match = await runningDuel();
      let opened: BackfillRecord | undefined;
      // A request's id is drawn by the store: the probe follows it once it is known.
      await expectWakeAfterCommitOnly(
        '',
        async (unit) => {
          opened = await openBackfill(unit, match.id);
          aggregateId = opened.id;
        },
        async (unit) => {
          // The other team: one live request per team.
          aggregateId = (await openBackfill(unit, match.id, 1)).id;
        },
      );
      const request = opened!;
      const cancel = async (unit: UnitOfWork) =>
        backfills.transition(
          unit,
          (await backfills.load(unit.manager, request.id))!,
          { to: 'CANCELLED', reason: 'SERVER_CANCELLED' },
          new Date(),
        );
      await expectWakeAfterCommitOnly(
        request.id,
        (unit) =>
          backfills.transition(
            unit,
            request,
            { to: 'MATCHED', playerIds: [randomUUID()] },
            new Date(),
          ),
        cancel,
      );
    });
  });

  describe(PlayerRatings.name, () => {
    it('wakes the relay once the new ratings are committed, not for rolled-back ones', async () => {
      const playerId = await factories.player();
      await expectWakeAfterCommitOnly(playerId, (unit) =>
        ratings.importRatings(unit, [{ playerId, mu: 30, sigma: 5 }], new Date()),
      );
    });
  });

  describe(MatchPresenceService.name, () => {
    it('wakes the relay once a leave is committed, its event visible', async () => {
      const match = await runningDuel();
      const before = await watch(match.id);
      const outcome = await presence.left(match.id, match.participants[0]!.playerId, () => 60_000);
      expect(outcome).toMatchObject({ kind: 'recorded', changed: true });
      expect(wakes).toHaveLength(1);
      expect(await wakes[0]).toBe(before + 1);
      await reachedRedis();
    });
  });
});
