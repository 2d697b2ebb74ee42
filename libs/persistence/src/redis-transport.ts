import { ClientRedis, ServerRedis, type ReadPacket } from '@nestjs/microservices';
import { Cluster, type ClusterOptions } from 'ioredis';
import type { HostAndPort } from '@matchplane/config';

/** What redisTransportOptions adds under Redis Cluster: the transport's own clients' cluster. */
export interface TransportCluster {
  readonly nodes: HostAndPort[];
  readonly options: ClusterOptions;
  /** The client publishes with SPUBLISH (sharded pub/sub) instead of PUBLISH. */
  readonly shardedPublish: boolean;
}

function clusterOf(options: object): TransportCluster | undefined {
  return (options as { cluster?: TransportCluster }).cluster;
}

function connectCluster(cluster: TransportCluster, retry: (times: number) => unknown): Cluster {
  return new Cluster(cluster.nodes, {
    ...cluster.options,
    lazyConnect: true,
    // Nest's own reconnect policy (retryAttempts, retryDelay), as it applies to a single server.
    clusterRetryStrategy: (times) => {
      const delay = retry(times);
      return typeof delay === 'number' ? delay : null;
    },
  });
}

/**
 * Nest's Redis transport server, which builds a single-server client; under Redis Cluster
 * (options from redisTransportOptions) a cluster client instead. Plain PUBLISH is forwarded to
 * every node of a cluster, so a subscription on any node hears every channel.
 */
export class TopologyServerRedis extends ServerRedis {
  override createRedisClient(): unknown {
    const cluster = clusterOf(this.options);
    if (cluster === undefined) return super.createRedisClient() as unknown;
    return connectCluster(cluster, (times) => this.createRetryStrategy(times));
  }
}

/**
 * Nest's Redis transport client, as {@link TopologyServerRedis}: use it as `customClass`. With
 * `shardedPublish` an event goes out as SPUBLISH, to the one node owning its channel's slot, in
 * the message Nest's PUBLISH would carry (a listener parses either alike).
 */
export class TopologyClientRedis extends ClientRedis {
  override createClient(): unknown {
    const cluster = clusterOf(this.options);
    if (cluster === undefined) return super.createClient() as unknown;
    return connectCluster(cluster, (times) => this.createRetryStrategy(times));
  }

  protected override dispatchEvent(packet: ReadPacket): Promise<unknown> {
    if (clusterOf(this.options)?.shardedPublish !== true) return super.dispatchEvent(packet);
    const message = JSON.stringify(this.serializer.serialize(packet));
    // Nest types its clients loosely; connectCluster made this one.
    const cluster = this.pubClient as unknown as Cluster;
    return cluster.spublish(this.normalizePattern(packet.pattern as string), message);
  }
}
