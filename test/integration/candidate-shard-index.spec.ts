import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import {
  loadConfig,
  matcherShardPlan,
  ServiceConfig,
  type MatcherShardPlan,
} from '@matchplane/config';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { runInTransaction } from '@matchplane/persistence';
import { CandidateProjection, TicketStore, type StoredTicket } from '@matchplane/tickets';
import type { TestFactories } from '../support/factories';
import { ticketStoreHarness } from '../support/ticket-store-harness';

const ENV = {
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    duel: {
      attributes: { platform: { type: 'string', values: ['pc', 'console'] } },
      rules: [{ equal: 'platform' }],
    },
  }),
  MATCHER_SHARDS: JSON.stringify({
    duel: { attribute: 'platform' },
    squad: { regions: { eu: ['eu-west'], am: ['us-east', 'us-west'] } },
  }),
};

/*
 * Issue 35 item 1 follow-up: the candidate projection keeps, for a mode MATCHER_SHARDS splits, a
 * set per shard beside the mode's index, so that a shard's pass reads its own candidates only.
 * Real PostgreSQL writes through TicketStore, real Redis.
 */
describe(`${CandidateProjection.name} shard sets`, () => {
  let harness: Awaited<ReturnType<typeof ticketStoreHarness>>;
  let dataSource: DataSource;
  let redis: Redis;
  let prefix: string;
  let config: ServiceConfig;
  let tickets: TicketStore;
  let projection: CandidateProjection;
  let factories: TestFactories;

  beforeAll(async () => {
    harness = await ticketStoreHarness(ENV);
    ({ dataSource, redis, prefix, config, tickets, projection, factories } = harness);
  });

  afterEach(async () => {
    // Each test starts from an empty pool: end whatever is still searching.
    const searching = await dataSource.query<{ id: string }[]>(
      `SELECT id FROM queue_tickets WHERE state = 'SEARCHING'`,
    );
    for (const { id } of searching) await leave(await load(id));
  });

  afterAll(() => harness.close());

  const queue = async (
    mode: string,
    predictedRtt: Record<string, number>,
    attributes: Record<string, string> = {},
    store = tickets,
  ) =>
    (
      await runInTransaction(dataSource, async (manager, unit) =>
        store.create(
          unit,
          {
            id: randomUUID(),
            playerId: await factories.player(),
            mode,
            rating: 1500,
            predictedRtt,
            attributes,
          },
          new Date(),
        ),
      )
    ).ticket;

  const load = (id: string) =>
    runInTransaction(dataSource, async (manager) => (await tickets.load(manager, id))!);

  const leave = (ticket: StoredTicket) =>
    runInTransaction(dataSource, async (manager, unit) =>
      tickets.transition(unit, ticket, { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' }, new Date()),
    );

  const members = (key: string) => redis.zrange(key, 0, -1);
  const ids = (list: readonly { ticketId: string }[]) => list.map((c) => c.ticketId).sort();
  const sorted = (list: readonly StoredTicket[]) => list.map((t) => t.id).sort();

  it("keeps each candidate in its shard's set, and a shard's read returns only that set", async () => {
    const pcs = [
      await queue('duel', { 'eu-west': 20 }, { platform: 'pc' }),
      await queue('duel', { 'eu-west': 30 }, { platform: 'pc' }),
    ];
    const consoles = [await queue('duel', { 'eu-west': 20 }, { platform: 'console' })];

    expect((await members(projection.shardKey('duel', 'pc'))).sort()).toEqual(sorted(pcs));
    expect(await members(projection.shardKey('duel', 'console'))).toEqual(sorted(consoles));
    expect(await members(projection.unshardedKey('duel'))).toEqual([]);
    // The mode index still holds everyone (queue depth, rebuild).
    expect((await members(projection.modeIndexKey('duel'))).sort()).toEqual(
      sorted([...pcs, ...consoles]),
    );
    expect(ids(await projection.candidates('duel', 'pc'))).toEqual(sorted(pcs));
    expect(ids(await projection.candidates('duel', 'console'))).toEqual(sorted(consoles));
    expect(ids(await projection.candidates('duel'))).toEqual(sorted([...pcs, ...consoles]));
  });

  it('puts a ticket that measured regions of two groups in both region shards', async () => {
    const both = await queue('squad', { 'eu-west': 30, 'us-east': 90 });
    const east = await queue('squad', { 'us-west': 40 });
    // No measured region: the first group's shard explains it.
    const none = await queue('squad', {});
    expect((await members(projection.shardKey('squad', 'eu'))).sort()).toEqual(
      sorted([both, none]),
    );
    expect((await members(projection.shardKey('squad', 'am'))).sort()).toEqual(
      sorted([both, east]),
    );
  });

  it('empties the shard sets as tickets leave the queue', async () => {
    const pc = await queue('duel', { 'eu-west': 20 }, { platform: 'pc' });
    const both = await queue('squad', { 'eu-west': 30, 'us-east': 90 });
    await leave(pc);
    await leave(both);
    for (const key of [
      projection.unshardedKey('duel'),
      projection.unshardedKey('squad'),
      projection.shardKey('duel', 'pc'),
      projection.shardKey('squad', 'eu'),
      projection.shardKey('squad', 'am'),
      projection.modeIndexKey('duel'),
      projection.modeIndexKey('squad'),
    ])
      expect(await redis.zcard(key)).toBe(0);
  });

  it("drops an expired candidate from its shard's set at the shard's next read", async () => {
    const kept = await queue('duel', { 'eu-west': 20 }, { platform: 'pc' });
    const silent = await queue('duel', { 'eu-west': 20 }, { platform: 'pc' });
    // The candidate's TTL (the heartbeat timeout) ran out; its ticket row is not ended yet.
    await redis.del(projection.candidateKey(silent.id));
    expect(ids(await projection.candidates('duel', 'pc'))).toEqual([kept.id]);
    expect(await members(projection.shardKey('duel', 'pc'))).toEqual([kept.id]);
    expect(await members(projection.modeIndexKey('duel'))).toEqual([kept.id]);
  });

  it('rebuilds the shard sets from PostgreSQL: lost ones restored, stale entries removed', async () => {
    const pc = await queue('duel', { 'eu-west': 20 }, { platform: 'pc' });
    const console = await queue('duel', { 'eu-west': 20 }, { platform: 'console' });
    const gone = randomUUID();
    // Redis lost the pc set; a ticket that left the queue behind its writer's back; a candidate
    // in a shard set it does not belong to (written under another plan).
    await redis.del(projection.shardKey('duel', 'pc'));
    await redis.zadd(projection.shardKey('duel', 'console'), 1, gone);
    await redis.zadd(projection.shardKey('duel', 'console'), 1, pc.id);

    const { removed } = await projection.rebuild(dataSource, ['duel', 'squad']);
    expect(removed).toBe(1);
    expect(await members(projection.shardKey('duel', 'pc'))).toEqual([pc.id]);
    expect(await members(projection.shardKey('duel', 'console'))).toEqual([console.id]);
  });

  it("reads what a writer could not place (its MATCHER_SHARDS lags) from the unsharded set, in every shard's pass", async () => {
    // An API replica not yet given the matcher's MATCHER_SHARDS: duel is one shard to it.
    const lagging = loadConfig(ServiceConfig, {
      ...harness.db.env,
      QUEUE_MODE_ATTRIBUTES: ENV.QUEUE_MODE_ATTRIBUTES,
      REDIS_KEY_PREFIX: prefix,
    });
    const writer = new CandidateProjection(redis, lagging, lagging, matcherShardPlan(lagging));
    const store = new TicketStore(new OutboxWriter(), new OutboxSignal(redis, lagging), writer);
    const ticket = await queue('duel', { 'eu-west': 20 }, { platform: 'console' }, store);
    expect(await members(projection.unshardedKey('duel'))).toEqual([ticket.id]);
    // Both shards' passes read it (each pass's `select` then keeps what is its own).
    expect(ids(await projection.candidates('duel', 'pc'))).toEqual([ticket.id]);
    expect(ids(await projection.candidates('duel', 'console'))).toEqual([ticket.id]);
    // The matcher's rebuild places it under the matcher's plan.
    await projection.rebuild(dataSource, ['duel']);
    expect(await members(projection.unshardedKey('duel'))).toEqual([]);
    expect(await members(projection.shardKey('duel', 'console'))).toEqual([ticket.id]);
    await leave(ticket);
    expect(await redis.zcard(projection.shardKey('duel', 'console'))).toBe(0);
  });

  it('places a candidate every shard refuses in the unsharded set, and takes it out when it leaves', async () => {
    const plan: MatcherShardPlan = new Map([
      ['duel', [{ mode: 'duel', name: 'none', select: () => undefined }]],
    ]);
    const placeless = new CandidateProjection(redis, config, config, plan);
    const store = new TicketStore(new OutboxWriter(), new OutboxSignal(redis, config), placeless);
    const ticket = await queue('duel', { 'eu-west': 20 }, { platform: 'pc' }, store);
    expect(await members(placeless.unshardedKey('duel'))).toEqual([ticket.id]);
    expect(ids(await placeless.candidates('duel', 'none'))).toEqual([ticket.id]);
    await runInTransaction(dataSource, async (manager, unit) =>
      store.transition(unit, ticket, { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' }, new Date()),
    );
    expect(await redis.zcard(placeless.unshardedKey('duel'))).toBe(0);
  });
});
