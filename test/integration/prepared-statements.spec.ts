import { DataSource, type QueryRunner } from 'typeorm';
import {
  dataSourceOptions,
  preparedStatementName,
  poolClient,
  runInTransaction,
} from '@matchplane/persistence';
import { createTestDatabase, onOneConnection, type TestDatabase } from '../support/database';

/** The named statements of the session `runner` holds. */
async function preparedOn(runner: QueryRunner): Promise<string[]> {
  const rows = (await runner.query('SELECT name FROM pg_prepared_statements ORDER BY name')) as {
    name: string;
  }[];
  return rows.map((row) => row.name);
}

describe('prepared statements (DATABASE_PREPARED_STATEMENTS)', () => {
  const SUM = 'SELECT $1::int + $2::int AS n';
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = await db.dataSource();
    await dataSource.query('CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL)');
  });

  afterAll(() => db.drop());

  beforeEach(() => dataSource.query('TRUNCATE counters; INSERT INTO counters VALUES (1, 0)'));

  it('prepares a parametrized statement once per connection and reuses it, with the same answers', async () => {
    await onOneConnection(dataSource, async (runner) => {
      expect(await runner.query(SUM, [1, 2])).toEqual([{ n: 3 }]);
      expect(await runner.query(SUM, [20, 22])).toEqual([{ n: 42 }]);
      // TypeORM's shape for an UPDATE (rows and the affected count) is unchanged.
      expect(
        await runner.query('UPDATE counters SET value = value + $1 WHERE id = $2', [5, 1]),
      ).toEqual([[], 1]);
      const prepared = await preparedOn(runner);
      expect(prepared).toContain(preparedStatementName(SUM));
      expect(prepared).toContain(
        preparedStatementName('UPDATE counters SET value = value + $1 WHERE id = $2'),
      );
    });
  });

  it('leaves statements without parameters unnamed', async () => {
    await onOneConnection(dataSource, async (runner) => {
      await runner.query('SELECT value FROM counters WHERE id = 1');
      expect(await preparedOn(runner)).not.toContain(
        preparedStatementName('SELECT value FROM counters WHERE id = 1'),
      );
    });
  });

  it('keeps a statement prepared in a transaction that rolled back, and after a failed execution', async () => {
    const read = 'SELECT value FROM counters WHERE id = $1';
    await expect(
      runInTransaction(dataSource, async (manager) => {
        await manager.query(read, [1]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await onOneConnection(dataSource, async (runner) => {
      await expect(runner.query('SELECT 1 / $1::int AS q', [0])).rejects.toThrow(
        /division by zero/,
      );
      expect(await runner.query('SELECT 1 / $1::int AS q', [1])).toEqual([{ q: 1 }]);
      // Every pooled connection that ran `read` answers it from its prepared statement.
      expect(await runner.query(read, [1])).toEqual([{ value: 0 }]);
    });
  });

  it('names at most `limit` texts per connection and runs the rest unnamed', async () => {
    const Limited = poolClient({
      preparedStatements: true,
      pipelining: false,
      preparedLimit: 2,
    });
    const client = new Limited({
      host: db.config.DATABASE_HOST,
      port: db.config.DATABASE_PORT,
      user: db.config.DATABASE_USER,
      password: db.config.DATABASE_PASSWORD,
      database: db.name,
    });
    await client.connect();
    try {
      for (const offset of [1, 2, 3]) {
        const { rows } = await client.query<{ n: number }>(`SELECT $1::int + ${offset} AS n`, [1]);
        expect(rows).toEqual([{ n: 1 + offset }]);
      }
      const { rows } = await client.query<{ name: string }>(
        'SELECT name FROM pg_prepared_statements',
      );
      expect(rows.map((row) => row.name).sort()).toEqual(
        [
          preparedStatementName('SELECT $1::int + 1 AS n'),
          preparedStatementName('SELECT $1::int + 2 AS n'),
        ].sort(),
      );
    } finally {
      await client.end();
    }
  });

  it('plans every execution of a prepared statement for its values, never with a generic plan', async () => {
    await dataSource.query(
      'CREATE TABLE grown (id int PRIMARY KEY, value int NOT NULL) WITH (autovacuum_enabled = off)',
    );
    await dataSource.query('CREATE INDEX grown_value ON grown (value)');
    const read = 'SELECT id FROM grown WHERE value = $1';
    await onOneConnection(dataSource, async (runner) => {
      // While the table is empty: under plan_cache_mode=auto the sixth run onwards would reuse a
      // generic plan costed for an empty table.
      for (let run = 0; run < 8; run += 1) expect(await runner.query(read, [1])).toEqual([]);
      await runner.query('INSERT INTO grown SELECT n, n FROM generate_series(1, 20000) AS n');
      expect(await runner.query(read, [7])).toEqual([{ id: 7 }]);
      const [plans] = (await runner.query(
        'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1',
        [preparedStatementName(read)],
      )) as { generic_plans: string; custom_plans: string }[];
      expect(plans).toEqual({ generic_plans: '0', custom_plans: '9' });
    });
  });

  it('prepares nothing with DATABASE_PREPARED_STATEMENTS=false', async () => {
    const plain = new DataSource(
      dataSourceOptions({ ...db.config, DATABASE_PREPARED_STATEMENTS: false }),
    );
    await plain.initialize();
    try {
      await onOneConnection(plain, async (runner) => {
        expect(await runner.query(SUM, [1, 2])).toEqual([{ n: 3 }]);
        expect(await preparedOn(runner)).toEqual([]);
      });
    } finally {
      await plain.destroy();
    }
  });
});
