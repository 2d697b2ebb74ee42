import Redis from 'ioredis';
import { testServices, uniqueSuffix } from './test-env';

export function testRedisPrefix(): string {
  return `mp_t_${uniqueSuffix()}`;
}

export function testRedis(): Redis {
  return new Redis({
    host: testServices.redisHost,
    port: testServices.redisPort,
    lazyConnect: false,
  });
}

/** Deletes every key under a test's prefix (BullMQ queues and projections alike). */
export async function deleteRedisPrefix(prefix: string): Promise<void> {
  const redis = testRedis();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
