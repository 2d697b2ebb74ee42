import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import { loadConfig, matcherShardPlan, ServiceConfig } from '@matchplane/config';
import {
  canTransitionMatch,
  DomainError,
  foldMatchEvents,
  MATCH_STATES,
  MatchCancelReason,
  TERMINAL_MATCH_STATES,
  type MatchCommand,
} from '@matchplane/domain';

const CANCEL_REASON = Object.values(MatchCancelReason)[0]!;
import { MatchStore, StaleMatchRevisionError, type NewParticipant } from '@matchplane/matches';
import {
  buildEnvelope,
  InvalidEnvelopeError,
  OutboxSignal,
  OutboxWriter,
} from '@matchplane/outbox';
import { runInTransaction } from '@matchplane/persistence';
import { CandidateProjection } from '@matchplane/tickets';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { testRedis, testRedisPrefix } from '../support/redis';
import { RoundTrips } from '../support/round-trips';

describe(MatchStore.name, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let redis: Redis;
  let store: MatchStore;
  let factories: TestFactories;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await db.dataSource();
    redis = testRedis();
    const config = loadConfig(ServiceConfig, { ...db.env, REDIS_KEY_PREFIX: testRedisPrefix() });
    const signal = new OutboxSignal(redis, config);
    store = new MatchStore(dataSource, new OutboxWriter(), signal);
    factories = TestFactories.standalone(
      dataSource,
      signal,
      new CandidateProjection(redis, config, config, matcherShardPlan(config)),
    );
  });

  afterAll(async () => {
    redis.disconnect();
    await db.drop();
  });

  /** Players and their SEARCHING tickets (the match's preconditions), made by their own stores. */
  async function participants(count: number): Promise<NewParticipant[]> {
    const result: NewParticipant[] = [];
    for (let index = 0; index < count; index += 1) {
      const ticket = await factories.searchingTicket(await factories.player());
      result.push({
        playerId: ticket.playerId,
        ticketId: ticket.id,
        team: index % 2,
        rating: ticket.rating,
      });
    }
    return result;
  }

  const outboxRowsOf = (matchId: string) =>
    dataSource.query<{ revision: string; player_ids: string[] }[]>(
      `SELECT revision, player_ids FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
      [matchId],
    );

  it('creates a match and its first envelope, addressed to every participant, in one transaction', async () => {
    const players = await participants(2);
    const { match } = await runInTransaction(dataSource, (manager, unit) =>
      store.create(unit, { mode: 'duel', region: 'eu-west', participants: players }),
    );
    expect(await store.load(undefined, match.id)).toEqual(match);
    const rows = await outboxRowsOf(match.id);
    expect(rows).toEqual([
      { revision: '1', player_ids: expect.arrayContaining(players.map((p) => p.playerId)) },
    ]);
  });

  it('leaves nothing committed when the envelope of the change is invalid', async () => {
    const players = await participants(2);
    const id = randomUUID();
    // A writer in the same transaction stamps the -1 sentinel of a CTE that matched nothing: the
    // builder throws inside the transaction, so the match written before it rolls back too.
    await expect(
      runInTransaction(dataSource, async (manager, unit) => {
        const { events } = await store.create(unit, {
          id,
          mode: 'duel',
          region: 'eu-west',
          participants: players,
        });
        await new OutboxWriter().append(manager, [buildEnvelope({ ...events[0]!, revision: -1 })]);
      }),
    ).rejects.toBeInstanceOf(InvalidEnvelopeError);
    expect(await store.load(undefined, id)).toBeUndefined();
    expect(
      await dataSource.query(`SELECT 1 FROM match_participants WHERE match_id = $1`, [id]),
    ).toEqual([]);
    expect(await outboxRowsOf(id)).toEqual([]);
  });

  it('applies one of two concurrent transitions on the same revision and rejects the other cleanly', async () => {
    const { match } = await runInTransaction(dataSource, async (manager, unit) =>
      store.create(unit, {
        mode: 'duel',
        region: 'eu-west',
        participants: await participants(2),
      }),
    );
    const attempt = () =>
      runInTransaction(dataSource, (manager, unit) =>
        store.transition(unit, match.id, { to: 'PROCESS_READY' }, { expectedRevision: 1 }),
      );
    const results = await Promise.allSettled([attempt(), attempt()]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected && rejected.reason).toBeInstanceOf(StaleMatchRevisionError);
    expect((await store.load(undefined, match.id))?.revision).toBe(2);
    expect((await outboxRowsOf(match.id)).map((r) => r.revision)).toEqual(['1', '2']);
  });

  it('re-reads and re-computes a transition that lost a race, never double-applying it', async () => {
    const { match } = await runInTransaction(dataSource, async (manager, unit) =>
      store.create(unit, {
        mode: 'duel',
        region: 'eu-west',
        participants: await participants(2),
      }),
    );
    const results = await Promise.allSettled([
      store.transitionNow(match.id, { to: 'FAILED', reason: 'ALLOCATION_FAILED' }),
      store.transitionNow(match.id, { to: 'CANCELLED', reason: CANCEL_REASON }),
    ]);
    // Whichever lost re-read a terminal match, so its transition became illegal.
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected && rejected.reason).toBeInstanceOf(DomainError);
    expect((await store.load(undefined, match.id))?.revision).toBe(2);
    expect(await outboxRowsOf(match.id)).toHaveLength(2);
  });

  it("folds every match's event history to its stored row", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      const { match } = await runInTransaction(dataSource, async (manager, unit) =>
        store.create(unit, {
          mode: 'duel',
          region: 'eu-west',
          participants: await participants(2),
        }),
      );
      ids.push(match.id);
      let state = match.state;
      for (let step = 0; !TERMINAL_MATCH_STATES.has(state) && step < index % 6; step += 1) {
        const options = MATCH_STATES.filter((to) => canTransitionMatch(state, to));
        const to = options[(index + step) % options.length]!;
        const command: MatchCommand =
          to === 'FAILED'
            ? { to, reason: 'ALLOCATION_FAILED' }
            : to === 'CANCELLED'
              ? { to, reason: CANCEL_REASON }
              : to === 'PROCESS_READY'
                ? // The registering server's region (a fallback's on some): kept on the row.
                  { to, serverRegion: index % 2 === 0 ? 'eu-west' : 'us-east' }
                : ({ to } as MatchCommand);
        state = (await store.transitionNow(match.id, command)).match.state;
      }
    }
    const withServerRegion = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM matches WHERE id = ANY($1::uuid[]) AND server_region IS NOT NULL`,
      [ids],
    );
    expect(withServerRegion[0]!.n).toBeGreaterThan(0);
    const all = await dataSource.query<{ id: string }[]>(`SELECT id FROM matches`);
    for (const { id } of all) {
      expect(foldMatchEvents(await store.history(id))).toEqual(await store.load(undefined, id));
    }
    expect(all.length).toBeGreaterThanOrEqual(ids.length);
  });

  describe('round trips per write (counted at the driver: one commit per event is the floor)', () => {
    const kinds = (statements: readonly string[]) =>
      statements.map(
        (statement) =>
          /^(WITH|SELECT|INSERT|UPDATE|START TRANSACTION|COMMIT)\b/.exec(statement)?.[1] ??
          statement,
      );

    it('creating a match in a transaction is one statement: the match, its roster and its event', async () => {
      const roster = await participants(2);
      const recorder = RoundTrips.start();
      const change = await runInTransaction(dataSource, (manager, unit) =>
        store.create(unit, { mode: 'duel', region: 'eu-west', participants: roster }),
      );
      const sent = recorder.stop();
      expect(kinds(sent.statements)).toEqual(['START TRANSACTION', 'WITH', 'COMMIT']);
      expect(await store.load(undefined, change.match.id)).toEqual(change.match);
      expect(await outboxRowsOf(change.match.id)).toHaveLength(1);
    });

    it('a transition on its own is a read and one write statement, with no transaction around them', async () => {
      const { match } = await runInTransaction(dataSource, async (manager, unit) =>
        store.create(unit, {
          mode: 'duel',
          region: 'eu-west',
          participants: await participants(2),
        }),
      );
      for (const step of [{ to: 'PROCESS_READY' }, { to: 'ASSIGNMENT_READY' }] as MatchCommand[]) {
        const recorder = RoundTrips.start();
        await store.transitionNow(match.id, step);
        const sent = recorder.stop();
        expect(kinds(sent.statements)).toEqual(['SELECT', 'WITH']);
        // The relay's wake-up: at most one per write (none when one is still in flight: see OutboxSignal).
        expect(sent.redisCommands.filter((name) => name !== 'publish')).toEqual([]);
        expect(sent.redisCommands.length).toBeLessThanOrEqual(1);
      }
      expect((await outboxRowsOf(match.id)).map((row) => row.revision)).toEqual(['1', '2', '3']);
      expect((await store.load(undefined, match.id))?.state).toBe('ASSIGNMENT_READY');
    });
  });
});
