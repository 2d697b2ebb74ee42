import type Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { FailOpenRedisThrottlerStorage } from '../../apps/api/src/http/rate-limit.storage';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

const WINDOW_MS = 60_000;

/**
 * The API's rate-limit counts against real Redis: counts that arrive together (requests read in
 * one turn of the event loop) share one Redis command, and every count stays exact.
 */
describe('rate-limit counts in Redis', () => {
  let redis: Redis;
  let prefix: string;
  let storage: FailOpenRedisThrottlerStorage;
  let uncounted: Counter;

  beforeEach(async () => {
    redis = testRedis();
    await redis.ping();
    prefix = testRedisPrefix();
    uncounted = new Counter({ name: 'uncounted', help: 'uncounted', registers: [new Registry()] });
    storage = new FailOpenRedisThrottlerStorage(redis, uncounted);
  });

  afterEach(async () => {
    redis.disconnect();
    await deleteRedisPrefix(prefix);
  });

  it('sends counts that arrive together as one Redis command, each count exact', async () => {
    const sent = jest.spyOn(redis, 'sendCommand');
    // 40 requests of 10 clients (4 each) and a limit of 3: each client's 4th is refused.
    const counts = await Promise.all(
      Array.from({ length: 40 }, (_unused, i) =>
        storage.increment(`${prefix}:client-${i % 10}`, WINDOW_MS, 3, WINDOW_MS, 'session'),
      ),
    );
    expect(sent).toHaveBeenCalledTimes(1);
    for (let client = 0; client < 10; client += 1) {
      const own = counts.filter((_count, i) => i % 10 === client);
      expect(own.map((count) => count.totalHits)).toEqual([1, 2, 3, 4]);
      expect(own.map((count) => count.isBlocked)).toEqual([false, false, false, true]);
      expect(own[3]?.timeToBlockExpire).toBe(WINDOW_MS / 1000);
      expect(own[0]?.timeToExpire).toBe(WINDOW_MS / 1000);
    }
    expect((await uncounted.get()).values[0]?.value ?? 0).toBe(0);
  });

  it('keeps a refusal for the block duration, across storages sharing Redis (API replicas)', async () => {
    const replica = new FailOpenRedisThrottlerStorage(redis, uncounted);
    const key = `${prefix}:flooder`;
    await storage.increment(key, WINDOW_MS, 1, 2_000, 'session');
    expect((await replica.increment(key, WINDOW_MS, 1, 2_000, 'session')).isBlocked).toBe(true);
    const later = await storage.increment(key, WINDOW_MS, 1, 2_000, 'session');
    expect(later).toMatchObject({ isBlocked: true, timeToBlockExpire: 2 });
    // Another throttler of the same client counts apart.
    expect((await storage.increment(key, WINDOW_MS, 1, 2_000, 'address')).isBlocked).toBe(false);
  });
});
