import {
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
  Inject,
} from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';
import { RedisKeyspace, type RedisConnectionConfig, type ServiceConfig } from '@matchplane/config';
import type { RedisOptions as BullRedisOptions } from 'bullmq';
import { describeRedis, redisEndpoint } from './redis-connection';

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

export function redisOptions(config: RedisConnectionConfig): RedisOptions {
  return { ...redisEndpoint(config), ...RECONNECTING };
}

/** BullMQ's own connection options (its types are not ioredis's), same server and backoff. */
export function bullConnection(config: RedisConnectionConfig): BullRedisOptions {
  return { ...redisEndpoint(config), ...RECONNECTING };
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
}

/**
 * Options of a @nestjs/microservices Redis transport (server or client): the one place the
 * transport's connection is described, for the API's listeners and the dispatcher's publisher.
 */
export function redisTransportOptions(
  config: RedisConnectionConfig,
  connectionName: string,
  use: RedisTransportUse = { reconnect: true },
) {
  return {
    ...redisEndpoint(config),
    connectionName,
    ...(use.reconnect
      ? { retryAttempts: Number.MAX_SAFE_INTEGER, retryDelay: REDIS_RECONNECT_MAX_DELAY_MS }
      : {}),
    ...(use.autoPipelining ? { enableAutoPipelining: true } : {}),
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
  const redis = new Redis({ ...redisOptions(config), connectionName: name });
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
  const redis = new Redis({
    ...redisEndpoint(config),
    connectionName: name,
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  return redis;
}

class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(Redis) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    // A lazy connection that never connected has nothing to flush.
    if (this.redis.status === 'wait') return this.redis.disconnect();
    // quit() lets a queued publish go out first.
    await this.redis.quit().catch(() => this.redis.disconnect());
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
