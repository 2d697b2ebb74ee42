import './register-paths';
import { DataSource } from 'typeorm';
import { DatabaseConfig, loadConfig } from '@matchplane/config';
import { dataSourceOptions, Migrator } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { withAdminClient } from './database';
import { TEMPLATE_PREFIX, TEST_DATABASE_PREFIX, templateDatabase, testServices } from './test-env';

/**
 * Runs once per `jest` invocation (Jest calls it for each project that has tests; the flag
 * makes the second call free): rebuilds the template database from the migrations, so the
 * test databases cloned from it always carry the current schema.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.MATCHPLANE_TEST_TEMPLATE_READY === '1') return;
  const template = templateDatabase();
  await withAdminClient(async (client) => {
    // Databases left by an interrupted run of this machine's earlier test processes.
    // Databases and templates left by interrupted runs: their process ids are dead.
    const stale = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname LIKE $2`,
      [`${TEST_DATABASE_PREFIX}%`, `${TEMPLATE_PREFIX}%`],
    );
    for (const { datname } of stale.rows) {
      const owner = datname.startsWith(TEMPLATE_PREFIX)
        ? datname.slice(TEMPLATE_PREFIX.length)
        : datname.slice(TEST_DATABASE_PREFIX.length);
      const pid = Number(owner.split('_')[0]);
      if (!isAlive(pid)) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${template}"`);
  });
  const config = loadConfig(DatabaseConfig, {
    DATABASE_HOST: testServices.host,
    DATABASE_PORT: String(testServices.port),
    DATABASE_USER: testServices.user,
    DATABASE_NAME: template,
    ...(testServices.password ? { DATABASE_PASSWORD: testServices.password } : {}),
  });
  const dataSource = new DataSource(dataSourceOptions(config, { migrations: allMigrations }));
  await dataSource.initialize();
  try {
    await new Migrator(dataSource).up();
  } finally {
    await dataSource.destroy();
  }
  process.env.MATCHPLANE_TEST_TEMPLATE = template;
  process.env.MATCHPLANE_TEST_TEMPLATE_READY = '1';
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
