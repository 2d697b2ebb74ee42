import { Client } from 'pg';
import { DataSource, type QueryRunner } from 'typeorm';
import { DatabaseConfig, loadConfig } from '@matchplane/config';
import { dataSourceOptions } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { TEST_DATABASE_PREFIX, templateDatabase, testServices, uniqueSuffix } from './test-env';

export async function withAdminClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({
    host: testServices.host,
    port: testServices.port,
    user: testServices.user,
    password: testServices.password,
    database: testServices.adminDatabase,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  /** Environment variables pointing an app (or a child process) at this database. */
  env: Record<string, string>;
  config: DatabaseConfig;
  /** A DataSource on this database, opened on first use and closed by drop(). */
  dataSource(): Promise<DataSource>;
  drop(): Promise<void>;
}

/**
 * A private database for one test file. `migrated` clones the template that global setup
 * migrated; otherwise the database is empty (for migration tests).
 */
export async function createTestDatabase(
  options: {
    migrated?: boolean;
    /** This process's pool (not the env handed to apps): a test with that many writers at once. */
    poolSize?: number;
  } = {},
): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  const name = `${TEST_DATABASE_PREFIX}${uniqueSuffix()}`;
  await withAdminClient((client) =>
    client.query(`CREATE DATABASE "${name}"${migrated ? ` TEMPLATE "${templateDatabase()}"` : ''}`),
  );
  const env: Record<string, string> = {
    DATABASE_HOST: testServices.host,
    DATABASE_PORT: String(testServices.port),
    DATABASE_USER: testServices.user,
    DATABASE_NAME: name,
    ...(testServices.password ? { DATABASE_PASSWORD: testServices.password } : {}),
  };
  const config = loadConfig(DatabaseConfig, {
    ...env,
    ...(options.poolSize === undefined ? {} : { DATABASE_POOL_SIZE: String(options.poolSize) }),
  });
  let opened: DataSource | undefined;
  return {
    name,
    env,
    config,
    async dataSource() {
      if (!opened) {
        opened = new DataSource(dataSourceOptions(config, { migrations: allMigrations }));
        await opened.initialize();
      }
      return opened;
    },
    async drop() {
      if (opened?.isInitialized) await opened.destroy();
      await withAdminClient((client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
    },
  };
}

/** Runs `work` on one pooled connection of `dataSource`, released afterwards. */
export async function onOneConnection<T>(
  dataSource: DataSource,
  work: (runner: QueryRunner) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    return await work(runner);
  } finally {
    await runner.release();
  }
}
