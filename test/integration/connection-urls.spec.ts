import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { createRedisConnection, dataSourceOptions } from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { testServices } from '../support/test-env';

/** DATABASE_URL and REDIS_URL alone reach the real PostgreSQL and Redis. */
describe('connection URLs', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db.drop();
  });

  it('open the database the URL names and the Redis it points at, with no separate variable set', async () => {
    const credentials = testServices.password
      ? `${encodeURIComponent(testServices.user)}:${encodeURIComponent(testServices.password)}`
      : encodeURIComponent(testServices.user);
    const config = loadConfig(ServiceConfig, {
      DATABASE_URL: `postgres://${credentials}@${testServices.host}:${testServices.port}/${db.name}`,
      REDIS_URL: `redis://${testServices.redisHost}:${testServices.redisPort}`,
    });

    const dataSource = new DataSource(dataSourceOptions(config, { applicationName: 'url-test' }));
    await dataSource.initialize();
    try {
      const [row] = await dataSource.query<{ name: string }[]>('SELECT current_database() AS name');
      expect(row?.name).toBe(db.name);
    } finally {
      await dataSource.destroy();
    }

    const redis = createRedisConnection(config, new Logger('Redis'), 'url-test');
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });
});
