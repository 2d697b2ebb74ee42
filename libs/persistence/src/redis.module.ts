import { Logger, Module, type DynamicModule, type OnApplicationShutdown, Inject } from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';
import type { ServiceConfig } from '@matchplane/config';
import type { RedisOptions as BullRedisOptions } from 'bullmq';

export function redisOptions(config: ServiceConfig): RedisOptions {
  return {
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    password: config.REDIS_PASSWORD,
    // BullMQ requires this for blocking connections; commands wait for a reconnect instead of failing.
    maxRetriesPerRequest: null,
    retryStrategy: redisRetryDelayMs,
  };
}

function redisRetryDelayMs(attempt: number): number {
  return Math.min(10_000, 100 * 2 ** Math.min(attempt, 7));
}

/** BullMQ's own connection options (its types are not ioredis's), same server and backoff. */
export function bullConnection(config: ServiceConfig): BullRedisOptions {
  return {
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    password: config.REDIS_PASSWORD,
    maxRetriesPerRequest: null,
    retryStrategy: redisRetryDelayMs,
  };
}

/**
 * Options of a @nestjs/microservices Redis transport (server or client) that keeps reconnecting:
 * without retryAttempts the transport gives up after the first lost connection.
 */
export function redisTransportOptions(config: ServiceConfig, connectionName: string) {
  return {
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    password: config.REDIS_PASSWORD,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    retryDelay: 1_000,
    connectionName,
  };
}

/**
 * A Redis connection that logs a line per outage (and one on recovery) instead of an error per
 * failed reconnect attempt.
 */
export function createRedisConnection(config: ServiceConfig, logger: Logger, name: string): Redis {
  const redis = new Redis({ ...redisOptions(config), connectionName: name });
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(`Redis at ${config.REDIS_HOST}:${config.REDIS_PORT} is unreachable (${error.message}); reconnecting with backoff`);
  });
  redis.on('ready', () => {
    if (down) logger.log(`Redis at ${config.REDIS_HOST}:${config.REDIS_PORT} is reachable again`);
    down = false;
  });
  return redis;
}

class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(Redis) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

@Module({})
export class RedisModule {
  static forRoot(config: ServiceConfig, connectionName = 'matchplane'): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [
        {
          provide: Redis,
          useFactory: () => createRedisConnection(config, new Logger('Redis'), connectionName),
        },
        RedisCloser,
      ],
      exports: [Redis],
    };
  }
}
