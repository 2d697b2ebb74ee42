import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type Redis from 'ioredis';
import type { Counter } from 'prom-client';

/** A count that takes longer than this lets the request through: Redis is in trouble. */
const COUNT_TIMEOUT_MS = 250;

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const NOT_COUNTED: ThrottlerStorageRecord = {
  totalHits: 0,
  timeToExpire: 0,
  isBlocked: false,
  timeToBlockExpire: 0,
};

/**
 * The limits' counts in Redis (one atomic script per count, @nest-lab/throttler-storage-redis), so
 * they hold across API replicas. They fail open: with Redis unreachable or slow a request is let
 * through uncounted (and counted in a metric) rather than refused or left waiting on the
 * connection's reconnect queue, since PostgreSQL, not Redis, serves the routes.
 */
export class FailOpenRedisThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimits');
  private readonly counts: ThrottlerStorageRedisService;
  private failing = false;

  constructor(
    private readonly redis: Redis,
    private readonly uncounted: Counter,
  ) {
    this.counts = new ThrottlerStorageRedisService(redis);
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    if (this.redis.status !== 'ready') return this.failOpen(`Redis is ${this.redis.status}`);
    let timer: NodeJS.Timeout | undefined;
    try {
      const record = await Promise.race([
        this.counts.increment(key, ttl, limit, blockDuration, throttlerName),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${COUNT_TIMEOUT_MS} ms`)), COUNT_TIMEOUT_MS);
        }),
      ]);
      if (this.failing) this.logger.log('rate limits are counted again');
      this.failing = false;
      return record;
    } catch (error) {
      return this.failOpen((error as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  private failOpen(why: string): ThrottlerStorageRecord {
    this.uncounted.inc();
    if (!this.failing) this.logger.warn(`rate limits are not counted (${why}); requests pass uncounted`);
    this.failing = true;
    return NOT_COUNTED;
  }
}
