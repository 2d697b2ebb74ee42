import { DataSource } from 'typeorm';
import { ServiceConfig, loadConfig } from '@matchplane/config';
import { dataSourceOptions } from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { testServices } from '../support/test-env';

/**
 * DATABASE_POOL_IDLE_TIMEOUT_MS reaches the pool: a connection left unused that long is closed,
 * and not before. (node-postgres' own 10 s closed a burst's connections all at once, a stall of
 * every other request: docs/BENCHMARKS.md.)
 */
describe('the pool idle timeout', () => {
  let db: TestDatabase;
  let admin: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = new DataSource(dataSourceOptions(configFor({}), { applicationName: 'idle-admin' }));
    await admin.initialize();
  });

  afterAll(async () => {
    await admin.destroy();
    await db.drop();
  });

  function configFor(env: Record<string, string>): ServiceConfig {
    return loadConfig(ServiceConfig, {
      DATABASE_HOST: testServices.host,
      DATABASE_PORT: String(testServices.port),
      DATABASE_USER: testServices.user,
      ...(testServices.password ? { DATABASE_PASSWORD: testServices.password } : {}),
      DATABASE_NAME: db.name,
      ...env,
    });
  }

  const backends = async (applicationName: string) =>
    Number(
      (
        await admin.query<{ n: string }[]>(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`,
          [applicationName],
        )
      )[0]?.n,
    );

  /** Opens three connections at once (three statements in flight), then leaves them idle. */
  async function burst(idleTimeoutMs: number, applicationName: string): Promise<DataSource> {
    const dataSource = new DataSource(
      dataSourceOptions(
        configFor({
          DATABASE_POOL_IDLE_TIMEOUT_MS: String(idleTimeoutMs),
          DATABASE_POOL_SIZE: '3',
        }),
        { applicationName },
      ),
    );
    await dataSource.initialize();
    await Promise.all([1, 2, 3].map(() => dataSource.query('SELECT pg_sleep(0.05)')));
    expect(await backends(applicationName)).toBe(3);
    return dataSource;
  }

  it('closes connections unused for the configured time, and keeps them until then', async () => {
    const short = await burst(1_000, 'idle-short');
    const long = await burst(4_000, 'idle-long');
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await backends('idle-short')).toBe(0);
      expect(await backends('idle-long')).toBe(3);
    } finally {
      await Promise.all([short.destroy(), long.destroy()]);
    }
  });

  it('defaults to five minutes', () => {
    expect(configFor({}).DATABASE_POOL_IDLE_TIMEOUT_MS).toBe(300_000);
    expect(
      (dataSourceOptions(configFor({})).extra as { idleTimeoutMillis: number }).idleTimeoutMillis,
    ).toBe(300_000);
  });
});
