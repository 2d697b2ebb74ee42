import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  MIGRATION_LOCK_KEY,
  Migrator,
  dataSourceOptions,
  type MigrationProgress,
} from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** A pool of one: the run must work over the single session that holds the lock. */
async function openDataSource(db: TestDatabase): Promise<DataSource> {
  const dataSource = new DataSource(
    dataSourceOptions({ ...db.config, DATABASE_POOL_SIZE: 1 }, { migrations: allMigrations }),
  );
  return dataSource.initialize();
}

async function migrationRowCounts(dataSource: DataSource): Promise<Record<string, number>> {
  const rows = await dataSource.query<{ name: string; count: number }[]>(
    'SELECT name, count(*)::int AS count FROM schema_migrations GROUP BY name ORDER BY name',
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.count]));
}

describe(`${Migrator.name} under concurrency`, () => {
  let db: TestDatabase;
  const opened: DataSource[] = [];

  beforeEach(async () => {
    db = await createTestDatabase({ migrated: false });
  });

  afterEach(async () => {
    for (const dataSource of opened.splice(0))
      if (dataSource.isInitialized) await dataSource.destroy();
    await db.drop();
  });

  it('applies each migration exactly once when two runs start together', async () => {
    const [first, second] = await Promise.all([openDataSource(db), openDataSource(db)]);
    opened.push(first, second);

    const results = await Promise.all([new Migrator(first).up(), new Migrator(second).up()]);

    const names = allMigrations.map((migration) => new migration().name);
    expect(results.flat().sort()).toEqual([...names].sort());
    expect(results.filter((applied) => applied.length === 0)).toHaveLength(1);
    expect(await migrationRowCounts(first)).toEqual(
      Object.fromEntries(names.map((name) => [name, 1])),
    );
  });

  it('waits for whoever holds the migration lock before reading what is pending', async () => {
    const holder = new Client({
      host: db.config.DATABASE_HOST,
      port: db.config.DATABASE_PORT,
      user: db.config.DATABASE_USER,
      password: db.config.DATABASE_PASSWORD,
      database: db.name,
    });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const dataSource = await openDataSource(db);
      opened.push(dataSource);
      const events: MigrationProgress[] = [];
      let waiting!: () => void;
      const isWaiting = new Promise<void>((resolve) => (waiting = resolve));
      const run = new Migrator(dataSource, {
        onProgress: (event) => {
          events.push(event);
          if (event.kind === 'waiting-for-lock') waiting();
        },
      }).up();

      await isWaiting;
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [table] = await holder
        .query<{ found: string | null }>(`SELECT to_regclass('schema_migrations') AS found`)
        .then((result) => result.rows);
      expect(table!.found).toBeNull();
      expect(events).toEqual([{ kind: 'waiting-for-lock' }]);

      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      expect(await run).toHaveLength(allMigrations.length);
      expect(events.filter((event) => event.kind === 'applied')).toHaveLength(allMigrations.length);
    } finally {
      await holder.end();
    }
  });

  it('releases the lock when it is done, so a run on another connection goes ahead without waiting', async () => {
    const [first, second] = await Promise.all([openDataSource(db), openDataSource(db)]);
    opened.push(first, second);
    await new Migrator(first).up();
    const events: MigrationProgress[] = [];
    await new Migrator(second, { onProgress: (event) => events.push(event) }).rollback(
      allMigrations.length,
    );
    expect(events.map((event) => event.kind)).not.toContain('waiting-for-lock');
    const [locks] = await first.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(locks!.count).toBe(0);
  });
});
