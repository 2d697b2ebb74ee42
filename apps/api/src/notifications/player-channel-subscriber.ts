import type Redis from 'ioredis';
import { duplicateRedis, isRedisCluster } from '@matchplane/persistence';

/**
 * A connection subscribing to player channels, and the pub/sub commands it uses: SUBSCRIBE on a
 * single server or a Sentinel master; under Redis Cluster sharded pub/sub (SSUBSCRIBE), held by a
 * subscriber per master on the node owning each channel's slot, so a notification crosses only
 * that node instead of the whole cluster bus (the dispatcher SPUBLISHes it there).
 */
export class PlayerChannelSubscriber {
  /** The event a message arrives as. */
  readonly messageEvent: 'message' | 'smessage';
  /**
   * Events saying pub/sub may have lost subscriptions and that they can be restored: the
   * connection's close and ready, and under Cluster also a node's loss or a per-master
   * subscriber's replacement (ioredis re-sends its SSUBSCRIBEs, but what was published between
   * is lost) and the subscribers' being ready again (the cluster as a whole stays ready while
   * one master restarts).
   */
  readonly lostEvents: readonly string[];
  readonly restoredEvents: readonly string[];

  private constructor(
    readonly connection: Redis,
    private readonly sharded: boolean,
  ) {
    this.messageEvent = sharded ? 'smessage' : 'message';
    this.lostEvents = sharded ? ['close', '-node', '-subscriber'] : ['close'];
    this.restoredEvents = sharded ? ['ready', 'subscribersReady'] : ['ready'];
  }

  /** A connection of its own, duplicated from the process's `redis`. */
  static of(redis: Redis, connectionName: string): PlayerChannelSubscriber {
    const sharded = isRedisCluster(redis);
    return new PlayerChannelSubscriber(
      duplicateRedis(redis, connectionName, sharded ? { shardedSubscribers: true } : {}),
      sharded,
    );
  }

  /** Resolves once every channel is subscribed. */
  subscribe(channels: readonly string[]): Promise<unknown> {
    if (channels.length === 0) return Promise.resolve();
    // One SSUBSCRIBE takes the channels of one slot only: one each.
    if (this.sharded)
      return Promise.all(channels.map((channel) => this.connection.ssubscribe(channel)));
    return this.connection.subscribe(...channels);
  }

  unsubscribe(channel: string): Promise<unknown> {
    return this.sharded
      ? this.connection.sunsubscribe(channel)
      : this.connection.unsubscribe(channel);
  }
}
