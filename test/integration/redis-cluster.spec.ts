import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import {
  notificationPattern,
  playerNotificationChannel,
  type StateNotification,
  type TicketResponse,
} from '@matchplane/contracts';
import { redisKeyPrefix, type ServiceConfig } from '@matchplane/config';
import {
  bullConnection,
  closeBullClusters,
  createRedisConnection,
  runInTransaction,
} from '@matchplane/persistence';
import {
  CandidateProjection,
  TicketLiveness,
  type TicketStore,
  type StoredTicket,
} from '@matchplane/tickets';
import type { TestFactories } from '../support/factories';
import { notificationPath, RecordingSockets } from '../support/notification-path';
import { RedisClusterNodes } from '../support/redis-cluster';
import { ticketStoreHarness } from '../support/ticket-store-harness';
import { startPlayerApi } from '../support/player-api';
import { countByStatus, startInProcessDispatcher } from '../support/outbox-fixtures';
import { freePort } from '../support/processes';

const ENV = {
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    duel: {
      attributes: { platform: { type: 'string', values: ['pc', 'console'] } },
      rules: [{ equal: 'platform' }],
    },
  }),
  MATCHER_SHARDS: JSON.stringify({ duel: { attribute: 'platform' } }),
};

async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/*
 * Issue 35 item 2: with REDIS_CLUSTER_NODES the apps run on a Redis Cluster. A real 3-master
 * cluster on loopback ports; the real code paths on it: the candidate projection's script (a
 * multi-key script, CROSSSLOT unless the keys share a slot), BullMQ (its Lua scripts likewise), and
 * the notification fan-out's publish and subscriptions (Nest's transport and the player channels).
 */
describe('Redis Cluster', () => {
  let nodes: RedisClusterNodes;
  let harness: Awaited<ReturnType<typeof ticketStoreHarness>>;
  let dataSource: DataSource;
  let redis: Redis;
  let config: ServiceConfig;
  let tickets: TicketStore;
  let projection: CandidateProjection;
  let factories: TestFactories;

  beforeAll(async () => {
    nodes = await RedisClusterNodes.start();
    harness = await ticketStoreHarness(
      { ...ENV, REDIS_CLUSTER_NODES: nodes.nodesVariable },
      (loaded) => createRedisConnection(loaded, new Logger('RedisCluster'), 'cluster-test'),
    );
    ({ dataSource, redis, config, tickets, projection, factories } = harness);
  });

  afterAll(async () => {
    await harness?.close();
    await nodes?.stop();
  });

  const queue = async (attributes: Record<string, string>) =>
    (
      await runInTransaction(dataSource, async (_manager, unit) =>
        tickets.create(
          unit,
          {
            id: randomUUID(),
            playerId: await factories.player(),
            mode: 'duel',
            rating: 1500,
            predictedRtt: { 'eu-west': 20 },
            attributes,
          },
          new Date(),
        ),
      )
    ).ticket;

  const leave = (ticket: StoredTicket) =>
    runInTransaction(dataSource, async (_manager, unit) =>
      tickets.transition(unit, ticket, { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' }, new Date()),
    );

  it('is a cluster whose masters each own slots', async () => {
    const masters = (await redis.cluster('SHARDS')) as unknown[];
    expect(masters).toHaveLength(3);
  });

  it('refreshes and removes candidates in the mode index and the shard sets, every key on one slot', async () => {
    const pc = await queue({ platform: 'pc' });
    const console = await queue({ platform: 'console' });
    const keys = [
      projection.candidateKey(pc.id),
      projection.modeIndexKey('duel'),
      projection.shardKey('duel', 'pc'),
      projection.unshardedKey('duel'),
    ];
    const slots = await Promise.all(keys.map((key) => redis.cluster('KEYSLOT', key)));
    expect(new Set(slots).size).toBe(1);
    expect(keys.every((key) => key.startsWith(`{${config.REDIS_KEY_PREFIX}}:`))).toBe(true);

    expect((await projection.candidates('duel', 'pc')).map((c) => c.ticketId)).toEqual([pc.id]);
    expect((await projection.candidates('duel')).map((c) => c.ticketId).sort()).toEqual(
      [pc.id, console.id].sort(),
    );
    expect(await projection.depths(['duel'])).toEqual({ duel: 2 });

    await leave(pc);
    expect(await projection.candidate(pc.id)).toBeUndefined();
    expect(await redis.zrange(projection.shardKey('duel', 'pc'), 0, -1)).toEqual([]);
    expect((await projection.candidates('duel')).map((c) => c.ticketId)).toEqual([console.id]);
    await leave(console);
    expect(await projection.depths(['duel'])).toEqual({ duel: 0 });
  });

  it('records a heartbeat on the candidate and marks it for the checkpoint, which takes it', async () => {
    const liveness = new TicketLiveness(redis, projection, config, config);
    const ticket = await queue({ platform: 'pc' });
    const now = new Date(Date.now() + 1_000);
    const [answered] = await liveness.beatMany(
      [{ ticketId: ticket.id, playerId: ticket.playerId }],
      now,
    );
    expect(answered?.id).toBe(ticket.id);
    expect((await liveness.beats([ticket.id])).get(ticket.id)).toEqual(now);
    expect(await liveness.takeBeaten()).toBe(1);
    const [, taken] = await liveness.scanTaken('0', 100);
    expect(taken).toEqual([ticket.id]);
    await liveness.releaseTaken();
    await leave(ticket);
  });

  it('runs a BullMQ job added to a queue under the hash-tagged prefix', async () => {
    const name = `cluster-${randomUUID()}`;
    const prefix = redisKeyPrefix(config);
    const queue = new Queue(name, { connection: bullConnection(config), prefix });
    const processed: unknown[] = [];
    const worker = new Worker(
      name,
      (job) => {
        processed.push(job.data);
        return Promise.resolve('done');
      },
      { connection: bullConnection(config), prefix },
    );
    try {
      const job = await queue.add('allocate', { matchId: 'm-1' });
      await until('the job to complete', () => job.isCompleted());
      expect(processed).toEqual([{ matchId: 'm-1' }]);
      // Its keys are the tagged ones, on the deployment's slot.
      expect(queue.keys.completed).toBe(`${prefix}:${name}:completed`);
      expect(await redis.zcard(`${prefix}:${name}:completed`)).toBe(1);
    } finally {
      await worker.close();
      await queue.close();
      await closeBullClusters();
    }
  });

  it("delivers a notification to the broadcast listener and to a player's channel subscriber", async () => {
    const sockets = new RecordingSockets();
    const path = notificationPath(config, redis, sockets, 1_000);
    const playerId = randomUUID();
    const notification: StateNotification = {
      event: 'MatchFound',
      aggregateType: 'match',
      aggregateId: randomUUID(),
      revision: 1,
      state: 'FOUND',
      occurredAt: new Date().toISOString(),
      playerIds: [playerId],
    };
    try {
      await path.start();
      await path.channels.follow(playerId);
      await path.transport.emit(notificationPattern(config.REDIS_KEY_PREFIX), notification);
      await path.playerTransport.emit(
        playerNotificationChannel(config.REDIS_KEY_PREFIX, playerId),
        notification,
      );
      await until(
        'both deliveries',
        () => sockets.broadcast.length + sockets.targeted.length === 2,
      );
      expect(sockets.broadcast).toEqual([notification]);
      expect(sockets.targeted).toEqual([{ playerIds: [playerId], notification }]);
    } finally {
      await path.close();
    }
  });

  it("runs the API's and the dispatcher's whole module graphs on the cluster: a player's session, probe, ticket and heartbeat, and the ticket's events delivered", async () => {
    const api = await startPlayerApi({ REDIS_CLUSTER_NODES: nodes.nodesVariable });
    // The dispatcher's whole module graph too: its outbox wake-up subscriber, BullMQ's queue and
    // the notification transport, all on the cluster.
    const dispatcher = await startInProcessDispatcher({
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      REDIS_CLUSTER_NODES: nodes.nodesVariable,
      HEALTH_PORT: String(await freePort()),
      HEALTH_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    try {
      const player = await api.newPlayer();
      expect((await api.probe(player.token, 'eu-west')).statusCode).toBe(200);
      const queued = await api.enqueue(player.token, 'duel');
      expect(queued.statusCode).toBe(201);
      const ticket = queued.json<TicketResponse>();
      const beat = await api.request('POST', `/v1/queue/tickets/${ticket.id}/heartbeat`, {
        token: player.token,
        idempotencyKey: randomUUID(),
      });
      expect(beat.statusCode).toBe(200);
      expect(await api.app.get(CandidateProjection).candidate(ticket.id)).toMatchObject({
        ticketId: ticket.id,
      });
      expect((await api.request('GET', '/health')).statusCode).toBe(200);
      // Woken by the API's publish on the cluster (its poll is 1 s by default, so this also
      // passes late without the wake-up), the dispatcher delivers the ticket's events.
      await until('the outbox to be delivered', async () => {
        const counts = await countByStatus(api.ds);
        return counts.pending === 0 && counts.published > 0;
      });
      expect((await countByStatus(api.ds)).dead).toBe(0);
      // No warning: no refused script, no lost subscription, no failed publish.
      expect(dispatcher.logs).toEqual([]);
    } finally {
      await dispatcher.close();
      await api.close();
    }
  });
});
