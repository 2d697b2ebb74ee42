import {
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  type Type,
  Inject,
} from '@nestjs/common';
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { RedisKeyspace, type RedisConnectionConfig, type ServiceConfig } from '@matchplane/config';
import type { ConnectionOptions as BullConnectionOptions } from 'bullmq';
import {
  describeRedis,
  redisClusterNodes,
  redisClusterOptions,
  redisEndpoint,
} from './redis-connection';
import { TopologyClientRedis, type TransportCluster } from './redis-transport';
import { answerWithin } from './answer-within';
import type { ClientProxy, CustomClientOptions } from '@nestjs/microservices';

/**
 * The longest pause between two reconnect attempts. A Sentinel promotion or a restart is over in
 * a second or two, and a subscriber hears nothing until it is back: a longer pause only adds to
 * the outage (with 10 s, found by the chaos run's redis-master fault, a subscriber came back
 * 0.7 s after the new master). An app holds a handful of connections, so even a long outage costs
 * Redis and the sentinels a few attempts a second per app.
 */
export const REDIS_RECONNECT_MAX_DELAY_MS = 500;

/** Doubling from 200 ms up to {@link REDIS_RECONNECT_MAX_DELAY_MS}. */
export function redisRetryDelayMs(attempt: number): number {
  return Math.min(REDIS_RECONNECT_MAX_DELAY_MS, 100 * 2 ** Math.min(attempt, 7));
}

const RECONNECTING = {
  // BullMQ requires this for blocking connections; commands wait for a reconnect instead of failing.
  maxRetriesPerRequest: null,
  retryStrategy: redisRetryDelayMs,
};

/**
 * The one place a Redis connection of the apps is made: to the server or Sentinel group of
 * {@link redisEndpoint}, or under REDIS_CLUSTER_NODES to the cluster, `node` applying to each of
 * its node connections and `cluster` to the cluster client. A Cluster answers every command,
 * pipeline, script and (plain) pub/sub call the apps make, so it is handed out typed as Redis and
 * the stores need not know the topology; only duplicate() differs, hence {@link duplicateRedis}.
 */
export function connectRedis(
  config: RedisConnectionConfig,
  node: RedisOptions,
  cluster: ClusterOptions = {},
): Redis {
  const nodes = redisClusterNodes(config);
  if (nodes === undefined) return new Redis({ ...redisEndpoint(config), ...node });
  return new Cluster(nodes, redisClusterOptions(config, node, cluster)) as unknown as Redis;
}

/** Whether `redis` (handed out typed as Redis by {@link connectRedis}) is a cluster client. */
export function isRedisCluster(redis: Redis): boolean {
  const connection: unknown = redis;
  return connection instanceof Cluster;
}

/**
 * A second connection like `redis` (for a subscriber: it serves nothing else), named. A cluster's
 * duplicate takes `cluster` options too, such as `shardedSubscribers` (a subscriber per master,
 * for SSUBSCRIBE).
 */
export function duplicateRedis(
  redis: Redis,
  connectionName: string,
  cluster: ClusterOptions = {},
): Redis {
  const connection: unknown = redis;
  if (!(connection instanceof Cluster)) return redis.duplicate({ connectionName });
  return connection.duplicate(undefined, {
    ...cluster,
    redisOptions: { ...connection.options.redisOptions, connectionName },
  }) as unknown as Redis;
}

/** The clusters made for BullMQ, which never closes a connection it was handed (RedisCloser does). */
const bullClusters = new Set<Cluster>();

/**
 * BullMQ's connection, same server and backoff. BullMQ builds a single-server client from
 * options but takes a cluster only as a client; it does not close a client it was handed, so
 * those are closed with the process's own connection ({@link closeBullClusters}).
 */
export function bullConnection(config: RedisConnectionConfig): BullConnectionOptions {
  const nodes = redisClusterNodes(config);
  if (nodes === undefined) return { ...redisEndpoint(config), ...RECONNECTING };
  const cluster = connectRedis(
    config,
    { maxRetriesPerRequest: null },
    { clusterRetryStrategy: redisRetryDelayMs },
  ) as unknown as Cluster;
  bullClusters.add(cluster);
  return cluster;
}

/** Closes the clusters {@link bullConnection} made (BullMQ's queues and workers closed first). */
export async function closeBullClusters(): Promise<void> {
  const clusters = [...bullClusters];
  bullClusters.clear();
  await Promise.all(clusters.map((cluster) => cluster.quit().catch(() => cluster.disconnect())));
}

/** How a @nestjs/microservices Redis transport connection behaves once it is lost. */
export interface RedisTransportUse {
  /**
   * true: keep reconnecting (a listener must: without retryAttempts the transport gives up after
   * the first lost connection). false: drop the lost connection; the next publish makes a new one
   * (what a publisher whose failed publish is retried anyway wants).
   */
  readonly reconnect: boolean;
  /** Publishes started together leave in one write. */
  readonly autoPipelining?: boolean;
  /**
   * Under Redis Cluster, publish with SPUBLISH (sharded pub/sub: to the node owning the channel's
   * slot) rather than PUBLISH (to every node): for channels heard with SSUBSCRIBE. Elsewhere plain
   * PUBLISH, which a single server or a Sentinel master serves alike.
   */
  readonly sharded?: boolean;
}

/**
 * Options of a @nestjs/microservices Redis transport (server or client): the one place the
 * transport's connection is described, for the API's listeners and the dispatcher's publisher.
 * The transport must be built by TopologyServerRedis or TopologyClientRedis, which alone read the
 * cluster these options carry under REDIS_CLUSTER_NODES.
 */
export function redisTransportOptions(
  config: RedisConnectionConfig,
  connectionName: string,
  use: RedisTransportUse = { reconnect: true },
) {
  const nodes = redisClusterNodes(config);
  return {
    ...redisEndpoint(config),
    connectionName,
    ...(use.reconnect
      ? { retryAttempts: Number.MAX_SAFE_INTEGER, retryDelay: REDIS_RECONNECT_MAX_DELAY_MS }
      : {}),
    ...(use.autoPipelining ? { enableAutoPipelining: true } : {}),
    // Read by TopologyServerRedis and TopologyClientRedis, which the transport must then use.
    ...(nodes === undefined
      ? {}
      : {
          cluster: {
            nodes,
            options: redisClusterOptions(
              config,
              { connectionName },
              // Not for SPUBLISH: ioredis redirects a pipelined command answered MOVED without
              // opening the connection it names, so after a master's restart (its connection
              // dropped from the pool) every sharded publish to its slots failed with MOVED.
              { enableAutoPipelining: use.autoPipelining === true && use.sharded !== true },
            ),
            shardedPublish: use.sharded === true,
          } satisfies TransportCluster,
        }),
  };
}

/**
 * A Redis connection that logs a line per outage (and one on recovery) instead of an error per
 * failed reconnect attempt.
 */
export function createRedisConnection(
  config: RedisConnectionConfig,
  logger: Logger,
  name: string,
): Redis {
  const redis = connectRedis(
    config,
    { ...RECONNECTING, connectionName: name },
    { clusterRetryStrategy: redisRetryDelayMs },
  );
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(
      `${describeRedis(config)} is unreachable (${error.message}); reconnecting with backoff`,
    );
  });
  redis.on('ready', () => {
    if (down) logger.log(`${describeRedis(config)} is reachable again`);
    down = false;
  });
  return redis;
}

/**
 * A connection for post-commit wake-ups only (a one-shot command): it connects on the first
 * publish and gives up after one failure, since a lost wake-up costs one relay polling interval.
 */
export function createWakeUpConnection(config: RedisConnectionConfig, name: string): Redis {
  const redis = connectRedis(
    config,
    {
      connectionName: name,
      lazyConnect: true,
      connectTimeout: 2_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    },
    { lazyConnect: true, clusterRetryStrategy: () => null },
  );
  redis.on('error', () => undefined);
  return redis;
}

/** How long a closing connection waits for Redis to answer what it sent. */
export const REDIS_CLOSE_TIMEOUT_MS = 2_000;

/**
 * Ends a connection once what it sent is answered: quit() is queued behind a publish still going
 * out and behind the SUBSCRIBE ioredis sends again on reconnecting, whose reply it leaves uncaught
 * (disconnect() then rejected it nowhere, an unhandled rejection that ends the process). A
 * connection that is not connected has nothing in flight, and quit() drops it at once.
 */
export async function closeRedis(redis: Redis): Promise<void> {
  // A lazy connection that never connected has nothing to flush.
  if (redis.status === 'wait') return redis.disconnect();
  // A Redis that stopped answering would hold the shutdown up.
  await answerWithin(redis.quit(), REDIS_CLOSE_TIMEOUT_MS).catch(() => redis.disconnect());
}

class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(Redis) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await closeBullClusters();
    await closeRedis(this.redis);
  }
}

@Module({})
export class RedisModule {
  /**
   * The process's one connection, and the key prefix every Redis key and channel carries. Global,
   * like TypeORM's DataSource: the connection is the process's, not a module's.
   */
  static forRoot(config: ServiceConfig, connectionName = 'matchplane'): DynamicModule {
    return this.withConnection(config, () =>
      createRedisConnection(config, new Logger('Redis'), connectionName),
    );
  }

  /** For a one-shot command that only publishes wake-ups (see createWakeUpConnection). */
  static forWakeUps(config: ServiceConfig, connectionName: string): DynamicModule {
    return this.withConnection(config, () => createWakeUpConnection(config, connectionName));
  }

  private static withConnection(config: ServiceConfig, connect: () => Redis): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [
        { provide: Redis, useFactory: connect },
        { provide: RedisKeyspace, useValue: RedisKeyspace.of(config) },
        RedisCloser,
      ],
      exports: [Redis, RedisKeyspace],
    };
  }
}

/**
 * A ClientsModule entry for a Redis transport client on the app's Redis (server, Sentinel group
 * or cluster). Nest types `customClass` as a ClientProxy of plain string statuses, which its own
 * ClientRedis (Redis statuses) does not satisfy, hence the cast.
 */
export function redisTransportClient(
  config: RedisConnectionConfig,
  connectionName: string,
  use: RedisTransportUse = { reconnect: true },
): CustomClientOptions {
  return {
    customClass: TopologyClientRedis as unknown as Type<ClientProxy>,
    options: redisTransportOptions(config, connectionName, use),
  };
}
