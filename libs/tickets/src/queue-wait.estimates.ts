import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { QueueWaitEstimateWindow, RedisKeyspace, redisKeyPrefix } from '@matchplane/config';

/** Waits kept per mode and region: the newest, so a busy queue's estimate follows it quickly. */
const SAMPLES_KEPT = 200;

/** How long an estimate read from Redis is served before it is read again (in the background). */
const ESTIMATE_FRESH_MS = 2_000;

interface CachedEstimate {
  seconds: number | null;
  readAt: number;
  reading?: Promise<void>;
}

/**
 * Wait estimates from recent matches: when a matcher commits a match it records each participant's
 * wait (enqueue to match) under the match's mode and region, the newest {@link SAMPLES_KEPT} kept
 * in Redis; an estimate is the median of the waits recorded within the last
 * QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS, or null when there are none (no recent match to go by).
 * Estimates are read from Redis at most every {@link ESTIMATE_FRESH_MS} per mode and region and
 * served from memory meanwhile, so a ticket response costs no Redis round trip.
 * Queue depth is the candidate projection's count of searching tickets per mode.
 */
@Injectable()
export class QueueWaitEstimates {
  private readonly logger = new Logger(QueueWaitEstimates.name);
  private readonly prefix: string;
  private readonly windowMs: number;
  private readonly cache = new Map<string, CachedEstimate>();

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(QueueWaitEstimateWindow) window: QueueWaitEstimateWindow,
  ) {
    this.prefix = redisKeyPrefix(keyspace);
    this.windowMs = window.QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS * 1_000;
  }

  private waitsKey(mode: string, region: string): string {
    return `${this.prefix}:waits:${mode}:${region}`;
  }

  /** Records a committed match's waits (ms); never throws (an estimate is not worth a failure). */
  async recordMatched(
    mode: string,
    region: string,
    waitsMs: readonly number[],
    at: Date,
  ): Promise<void> {
    if (waitsMs.length === 0) return;
    const key = this.waitsKey(mode, region);
    const entries = waitsMs.map((wait) => `${at.getTime()}:${Math.max(0, Math.round(wait))}`);
    try {
      await this.redis
        .multi()
        .lpush(key, ...entries)
        .ltrim(key, 0, SAMPLES_KEPT - 1)
        .pexpire(key, this.windowMs)
        .exec();
    } catch (error) {
      this.logger.warn(
        `waits of a ${mode} match in ${region} not recorded: ${(error as Error).message}`,
      );
    }
  }

  /**
   * The estimated wait in seconds for a ticket of `mode` in `region`, as last read (null until
   * read, and when no match was formed there recently); starts a read when that is stale.
   */
  estimateSeconds(mode: string, region: string): number | null {
    const key = this.waitsKey(mode, region);
    let cached = this.cache.get(key);
    if (!cached) {
      cached = { seconds: null, readAt: 0 };
      this.cache.set(key, cached);
    }
    if (!cached.reading && Date.now() - cached.readAt > ESTIMATE_FRESH_MS) {
      const entry = cached;
      entry.reading = this.read(key).then(
        (seconds) => {
          entry.seconds = seconds;
          entry.readAt = Date.now();
          entry.reading = undefined;
        },
        () => {
          entry.readAt = Date.now();
          entry.reading = undefined;
        },
      );
    }
    return cached.seconds;
  }

  /** {@link estimateSeconds}, read from Redis now. */
  async currentEstimateSeconds(mode: string, region: string): Promise<number | null> {
    const key = this.waitsKey(mode, region);
    const seconds = await this.read(key);
    this.cache.set(key, { seconds, readAt: Date.now() });
    return seconds;
  }

  private async read(key: string): Promise<number | null> {
    const since = Date.now() - this.windowMs;
    const waits = (await this.redis.lrange(key, 0, -1))
      .map((entry) => entry.split(':').map(Number) as [number, number])
      .filter(([at, wait]) => at >= since && Number.isFinite(wait))
      .map(([, wait]) => wait)
      .sort((a, b) => a - b);
    if (waits.length === 0) return null;
    const middle = Math.floor(waits.length / 2);
    const median =
      waits.length % 2 === 1
        ? (waits[middle] as number)
        : ((waits[middle - 1] as number) + (waits[middle] as number)) / 2;
    return Math.round(median / 100) / 10;
  }
}
