import type Redis from 'ioredis';
import { loadConfig, matcherShardPlan, ServiceConfig } from '@matchplane/config';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { createTestDatabase } from './database';
import { TestFactories } from './factories';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from './redis';

/**
 * A TicketStore and its candidate projection without an app: its own database and Redis prefix,
 * `env` on top of the defaults (e.g. MATCHER_SHARDS). `connect` makes its Redis connection (the
 * test Redis by default). `close` drops both.
 */
export async function ticketStoreHarness(
  env: Record<string, string> = {},
  connect: (config: ServiceConfig) => Redis = () => testRedis(),
) {
  const db = await createTestDatabase();
  const dataSource = await db.dataSource();
  const prefix = testRedisPrefix();
  const config = loadConfig(ServiceConfig, { ...db.env, ...env, REDIS_KEY_PREFIX: prefix });
  const redis = connect(config);
  const signal = new OutboxSignal(redis, config);
  const projection = new CandidateProjection(redis, config, config, matcherShardPlan(config));
  return {
    db,
    dataSource,
    redis,
    prefix,
    config,
    projection,
    tickets: new TicketStore(new OutboxWriter(), signal, projection),
    factories: TestFactories.standalone(dataSource, signal, projection),
    close: async () => {
      redis.disconnect();
      await deleteRedisPrefix(prefix);
      await db.drop();
    },
  };
}
