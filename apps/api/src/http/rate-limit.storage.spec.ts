import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { FailOpenRedisThrottlerStorage } from './rate-limit.storage';

describe(FailOpenRedisThrottlerStorage.name, () => {
  it('lets a request through uncounted, and counts that, while Redis is not connected', async () => {
    // Never connected: the count must not wait in ioredis's offline queue for a reconnect.
    const redis = new Redis({ port: 1, lazyConnect: true, maxRetriesPerRequest: null });
    const registry = new Registry();
    const uncounted = new Counter({ name: 'uncounted', help: 'uncounted', registers: [registry] });
    const storage = new FailOpenRedisThrottlerStorage(redis, uncounted);
    try {
      const record = await storage.increment('key', 60_000, 1, 60_000, 'session');
      expect(record).toEqual({
        totalHits: 0,
        timeToExpire: 0,
        isBlocked: false,
        timeToBlockExpire: 0,
      });
      await storage.increment('key', 60_000, 1, 60_000, 'session');
      expect((await registry.getSingleMetric('uncounted')?.get())?.values[0]?.value).toBe(2);
    } finally {
      redis.disconnect();
    }
  });
});
