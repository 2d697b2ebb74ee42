import Redis from 'ioredis';
import { playerNotificationChannel } from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import {
  dispatcherEnv,
  startInProcessDispatcher,
  countByStatus,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { MatchDriver, TestSocket, listen, notificationsUrl } from '../support/notification-clients';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { RedisClusterNodes } from '../support/redis-cluster';
import { waitFor } from '../support/processes';

/*
 * Issue 35 item 2: targeted fan-out on a Redis Cluster goes out sharded (SPUBLISH to the node
 * owning the player channel's slot, SSUBSCRIBE there), so each node carries only its own slots'
 * notifications instead of every one (plain PUBLISH is broadcast over the cluster bus). The real
 * dispatcher and API on a 3-master cluster: a match's notification reaches its player's socket,
 * and the subscription is a sharded one on the owning node, with no plain one anywhere.
 */
describe('Targeted notifications on a Redis Cluster', () => {
  let nodes: RedisClusterNodes;
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let matches: MatchDriver;
  /** One plain connection per node, to ask each what it holds. */
  let perNode: Redis[];

  beforeAll(async () => {
    nodes = await RedisClusterNodes.start(3, 7500);
    api = await startPlayerApi({ REDIS_CLUSTER_NODES: nodes.nodesVariable });
    await listen(api.app);
    dispatcher = await startInProcessDispatcher(
      await dispatcherEnv(api.db, api.prefix, {
        REDIS_CLUSTER_NODES: nodes.nodesVariable,
        NOTIFY_FANOUT: 'targeted',
      }),
    );
    matches = new MatchDriver(api.ds, api.app.get(MatchStore, { strict: false }));
    perNode = nodes.ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  });

  afterAll(async () => {
    perNode?.forEach((redis) => redis.disconnect());
    await dispatcher?.close();
    await api?.close();
    await nodes?.stop();
  });

  /** The node's index (in nodes.ports) owning `channel`'s slot. */
  const owner = async (channel: string) => {
    const slot = Number(await perNode[0]!.cluster('KEYSLOT', channel));
    const ranges = await perNode[0]!.cluster('SLOTS');
    const range = ranges.find(([first, last]) => slot >= first && slot <= last);
    return nodes.ports.indexOf(Number(range?.[2]?.[1]));
  };
  const subscriptions = async (channel: string) =>
    Promise.all(
      perNode.map(async (redis) => ({
        sharded: Number(((await redis.pubsub('SHARDNUMSUB', channel)) as [string, number])[1]),
        plain: Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]),
      })),
    );
  /** SPUBLISH calls a node has served (INFO commandstats). */
  const spublishes = async (redis: Redis) =>
    Number(/cmdstat_spublish:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);

  it('reaches the player’s socket through SSUBSCRIBE and SPUBLISH on the node owning the channel', async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const onA = await TestSocket.ready(notificationsUrl(api.app), a.token);
    const channel = playerNotificationChannel(api.prefix, a.playerId);
    const owning = await owner(channel);
    // Told `ready` only once subscribed: a sharded subscription on the owning node, no plain one.
    expect(await subscriptions(channel)).toEqual(
      nodes.ports.map((_port, index) => ({ sharded: index === owning ? 1 : 0, plain: 0 })),
    );
    const before = await spublishes(perNode[owning]!);

    const matchId = await matches.create([a.playerId, b.playerId]);
    await matches.advance(matchId);
    await onA.waitForRevision(matchId, 2);
    expect(onA.revisions(matchId)).toEqual([1, 2]);
    // Both revisions were published sharded to the owning node (and b's channel's elsewhere or too).
    expect((await spublishes(perNode[owning]!)) - before).toBeGreaterThanOrEqual(2);

    onA.close();
    await waitFor(
      async () => ((await subscriptions(channel))[owning]!.sharded === 0 ? true : undefined),
      { what: 'the replica to SUNSUBSCRIBE with its last socket of the player' },
    );
    expect(dispatcher.logs).toEqual([]);
  });

  it('subscribes again after the owning node restarts: the socket gets what was published meanwhile and after', async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const onA = await TestSocket.ready(notificationsUrl(api.app), a.token);
    const channel = playerNotificationChannel(api.prefix, a.playerId);
    const owning = await owner(channel);

    let matchId = '';
    // Delivered while its node is down: the dispatcher's SPUBLISH waits the outage out (or the
    // outbox retries it), and the replica's restored subscription or its catch-up brings it.
    await nodes.restart(owning, async () => {
      matchId = await matches.create([a.playerId, b.playerId]);
    });
    perNode[owning]!.disconnect();
    perNode[owning] = new Redis({ host: '127.0.0.1', port: nodes.ports[owning]! });
    await onA.waitForRevision(matchId, 1);
    await waitFor(
      async () => ((await subscriptions(channel))[owning]!.sharded === 1 ? true : undefined),
      { what: 'the sharded subscription to be restored on the restarted node' },
    );

    await matches.advance(matchId);
    await onA.waitForRevision(matchId, 2);
    expect(onA.revisions(matchId)).toEqual([1, 2]);
    onA.close();
  });

  it('catches a socket up on what its master published while the replica’s sharded subscriber was cut', async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const onA = await TestSocket.ready(notificationsUrl(api.app), a.token);
    const channel = playerNotificationChannel(api.prefix, a.playerId);
    const owning = await owner(channel);
    const node = perNode[owning]!;
    // Revision 1 goes out: the dispatcher now holds its connection to the owning master.
    const matchId = await matches.create([a.playerId, b.playerId]);
    await onA.waitForRevision(matchId, 1);

    // The master refuses new connections and drops the replica's subscriber: ioredis cannot
    // resubscribe, and revision 2, published on the dispatcher's open connection, reaches nobody.
    await node.config('SET', 'maxclients', '1');
    try {
      await node.client('KILL', 'TYPE', 'pubsub');
      await matches.advance(matchId);
      await waitFor(
        async () =>
          (await spublishes(node)) > 0 && (await subscriptions(channel))[owning]!.sharded === 0
            ? true
            : undefined,
        { what: 'the subscriber to be gone' },
      );
      await waitFor(async () => ((await countByStatus(api.ds)).pending === 0 ? true : undefined), {
        what: 'revision 2 to be delivered to nobody',
      });
      expect(onA.revisions(matchId)).toEqual([1]);
    } finally {
      await node.config('SET', 'maxclients', '10000');
    }
    // Subscribed again, the replica fills the socket in from history.
    await onA.waitForRevision(matchId, 2);
    expect(onA.revisions(matchId)).toEqual([1, 2]);
    onA.close();
  });
});
