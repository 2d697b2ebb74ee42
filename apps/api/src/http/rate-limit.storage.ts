import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';
import type { Counter } from 'prom-client';
import { answerWithin, RequestBatcher, type BatchOutcome } from '@matchplane/persistence';

/** A count that takes longer than this lets the request through: Redis is in trouble. */
const COUNT_TIMEOUT_MS = 250;

/** Most counts in one Redis command (the script runs them one after another, atomically). */
const MAX_COUNTS_PER_COMMAND = 256;

/** Commands in flight at once; counts arriving meanwhile go together in the next one. */
const COMMANDS_IN_FLIGHT = 2;

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const NOT_COUNTED: ThrottlerStorageRecord = {
  totalHits: 0,
  timeToExpire: 0,
  isBlocked: false,
  timeToBlockExpire: 0,
};

interface Count {
  readonly hitKey: string;
  readonly blockKey: string;
  readonly ttlMs: number;
  readonly limit: number;
  readonly blockDurationMs: number;
}

/** The Redis command's name on the connection (ioredis defineCommand: EVALSHA, EVAL once per socket). */
const COUNT_COMMAND = 'matchplaneRateLimitCounts';

/**
 * Many counts in one atomic script: for each (hit key, block key) pair, in order, the fixed-window
 * count of @nest-lab/throttler-storage-redis (the same keys and semantics, so replicas of the
 * earlier code share the counts during a rolling deploy): INCR the window's hits, start the window
 * on its first hit, refuse for the block duration once the hits exceed the limit, and start a new
 * window when the block ends. Answers four numbers per count.
 */
const COUNTS_SCRIPT = `
local answers = {}
for i = 1, #KEYS / 2 do
  local hitKey = KEYS[2 * i - 1]
  local blockKey = KEYS[2 * i]
  local ttl = tonumber(ARGV[3 * i - 2])
  local limit = tonumber(ARGV[3 * i - 1])
  local blockDuration = tonumber(ARGV[3 * i])
  local totalHits = redis.call('INCR', hitKey)
  local timeToExpire = redis.call('PTTL', hitKey)
  if timeToExpire <= 0 then
    redis.call('PEXPIRE', hitKey, ttl)
    timeToExpire = ttl
  end
  local isBlocked = redis.call('GET', blockKey)
  local timeToBlockExpire = 0
  if isBlocked then
    timeToBlockExpire = redis.call('PTTL', blockKey)
  elseif totalHits > limit then
    redis.call('SET', blockKey, 1, 'PX', blockDuration)
    isBlocked = '1'
    timeToBlockExpire = blockDuration
  end
  if isBlocked and timeToBlockExpire <= 0 then
    redis.call('DEL', blockKey)
    redis.call('SET', hitKey, 1, 'PX', ttl)
    totalHits = 1
    timeToExpire = ttl
    isBlocked = false
  end
  answers[#answers + 1] = totalHits
  answers[#answers + 1] = timeToExpire
  answers[#answers + 1] = isBlocked and 1 or 0
  answers[#answers + 1] = timeToBlockExpire
end
return answers
`;

type CountingRedis = Redis & {
  [COUNT_COMMAND](numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
};

/**
 * The limits' counts in Redis, so they hold across API replicas. Counts that arrive together
 * (requests read in one turn of the event loop) go to Redis as one script call (RequestBatcher),
 * each still exact: one round trip per batch rather than one per request, and requests that
 * arrived together (heartbeats) reach their handlers together, so they keep sharing the
 * handlers' own batches.
 *
 * They fail open: with Redis unreachable or slow a request is let through uncounted (and counted
 * in a metric) rather than refused or left waiting on the connection's reconnect queue, since
 * PostgreSQL, not Redis, serves the routes.
 */
export class FailOpenRedisThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimits');
  private readonly redis: CountingRedis;
  private readonly counts: RequestBatcher<Count, ThrottlerStorageRecord>;
  private failing = false;

  constructor(
    redis: Redis,
    private readonly uncounted: Counter,
  ) {
    if (!(COUNT_COMMAND in redis)) redis.defineCommand(COUNT_COMMAND, { lua: COUNTS_SCRIPT });
    this.redis = redis as CountingRedis;
    this.counts = new RequestBatcher((counts) => this.countInRedis(counts), {
      maxBatchSize: MAX_COUNTS_PER_COMMAND,
      maxConcurrentBatches: COMMANDS_IN_FLIGHT,
    });
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    if (this.redis.status !== 'ready') return this.failOpen(`Redis is ${this.redis.status}`);
    try {
      const record = await this.counts.submit({
        hitKey: `{${key}:${throttlerName}}:hits`,
        blockKey: `{${key}:${throttlerName}}:blocked`,
        ttlMs: ttl,
        limit,
        blockDurationMs: blockDuration,
      });
      if (this.failing) this.logger.log('rate limits are counted again');
      this.failing = false;
      return record;
    } catch (error) {
      return this.failOpen((error as Error).message);
    }
  }

  private async countInRedis(
    counts: readonly Count[],
  ): Promise<BatchOutcome<ThrottlerStorageRecord>[]> {
    const keys = counts.flatMap((count) => [count.hitKey, count.blockKey]);
    const args = counts.flatMap((count) => [count.ttlMs, count.limit, count.blockDurationMs]);
    const answers = await answerWithin(
      this.redis[COUNT_COMMAND](keys.length, ...keys, ...args),
      COUNT_TIMEOUT_MS,
    );
    if (!Array.isArray(answers) || answers.length !== counts.length * 4) {
      throw new TypeError(
        `the count script answered ${String(answers)} for ${counts.length} counts`,
      );
    }
    return counts.map((_count, i) => {
      const [totalHits, timeToExpireMs, isBlocked, timeToBlockExpireMs] = answers.slice(
        i * 4,
        i * 4 + 4,
      );
      return {
        value: {
          totalHits: totalHits as number,
          timeToExpire: Math.ceil((timeToExpireMs as number) / 1000),
          isBlocked: isBlocked === 1,
          timeToBlockExpire: Math.ceil((timeToBlockExpireMs as number) / 1000),
        },
      };
    });
  }

  private failOpen(why: string): ThrottlerStorageRecord {
    this.uncounted.inc();
    if (!this.failing)
      this.logger.warn(`rate limits are not counted (${why}); requests pass uncounted`);
    this.failing = true;
    return NOT_COUNTED;
  }
}
