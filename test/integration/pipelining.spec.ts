import type { Socket } from 'node:net';
import type { Client } from 'pg';
import { DataSource, type QueryRunner } from 'typeorm';
import { dataSourceOptions, runInTransaction, sendWithNext } from '@matchplane/persistence';
import { createTestDatabase, onOneConnection, type TestDatabase } from '../support/database';

/** How many times the runner's connection has handed bytes to the socket since the last call. */
function countFlushes(runner: QueryRunner): () => number {
  const client = (runner as unknown as { databaseConnection: Client }).databaseConnection;
  const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
  let flushes = 0;
  // Writable's two implementer hooks: one call is one write to the kernel, corked chunks or not.
  const hooks = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  for (const hook of ['_write', '_writev'] as const) {
    const original = hooks[hook];
    hooks[hook] = function (this: unknown, ...args: unknown[]) {
      flushes += 1;
      return original.apply(this, args);
    };
  }
  return () => {
    const seen = flushes;
    flushes = 0;
    return seen;
  };
}

function transactionStatus(runner: QueryRunner): string | null {
  const client = (runner as unknown as { databaseConnection: Client }).databaseConnection;
  return (client as unknown as { getTransactionStatus(): string | null }).getTransactionStatus();
}

describe('START TRANSACTION sent with the first statement (DATABASE_PIPELINING)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const count = async (source: DataSource) =>
    Number((await source.query<{ n: string }[]>('SELECT count(*) AS n FROM rows'))[0]?.n);

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = await db.dataSource();
    await dataSource.query('CREATE TABLE rows (id int PRIMARY KEY)');
  });

  afterAll(() => db.drop());

  beforeEach(() => dataSource.query('TRUNCATE rows'));

  async function flushesOfOneStatementTransaction(source: DataSource): Promise<number> {
    return onOneConnection(source, async (runner) => {
      const flushes = countFlushes(runner);
      await runner.startTransaction();
      await runner.query('INSERT INTO rows VALUES ($1)', [1]);
      await runner.commitTransaction();
      return flushes();
    });
  }

  it('costs a one-statement transaction two writes to the server instead of three', async () => {
    expect(await flushesOfOneStatementTransaction(dataSource)).toBe(2);
    expect(await count(dataSource)).toBe(1);

    const unpipelined = new DataSource(
      dataSourceOptions({ ...db.config, DATABASE_PIPELINING: false }),
    );
    await unpipelined.initialize();
    try {
      await dataSource.query('TRUNCATE rows');
      expect(await flushesOfOneStatementTransaction(unpipelined)).toBe(3);
      expect(await count(dataSource)).toBe(1);
    } finally {
      await unpipelined.destroy();
    }
  });

  it('still opens the transaction: what a failed transaction wrote is rolled back', async () => {
    await expect(
      runInTransaction(dataSource, async (manager) => {
        await manager.query('INSERT INTO rows VALUES ($1)', [1]);
        await manager.query('INSERT INTO rows VALUES ($1)', [2]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await count(dataSource)).toBe(0);
  });

  it('answers a failing first statement with its own error, and the connection is reusable', async () => {
    await dataSource.query('INSERT INTO rows VALUES (1)');
    await onOneConnection(dataSource, async (runner) => {
      await runner.startTransaction();
      await expect(runner.query('INSERT INTO rows VALUES ($1)', [1])).rejects.toThrow(
        /duplicate key value violates unique constraint/,
      );
      await runner.rollbackTransaction();
      expect(transactionStatus(runner)).toBe('I');
      await runner.startTransaction();
      await runner.query('INSERT INTO rows VALUES ($1)', [2]);
      expect(transactionStatus(runner)).toBe('T');
      await runner.commitTransaction();
    });
    expect(await count(dataSource)).toBe(2);
  });

  it('leaves no transaction open when the work fails before its first statement', async () => {
    await onOneConnection(dataSource, async (runner) => {
      await runner.startTransaction();
      await runner.rollbackTransaction();
      expect(transactionStatus(runner)).toBe('I');
      // Outside a transaction this commits at once: another connection sees it.
      await runner.query('INSERT INTO rows VALUES ($1)', [3]);
    });
    const other = new DataSource(dataSourceOptions(db.config));
    await other.initialize();
    try {
      expect(await count(other)).toBe(1);
    } finally {
      await other.destroy();
    }
  });

  it('applies the isolation level that follows START TRANSACTION', async () => {
    const isolation = await runInTransaction(
      dataSource,
      async (manager) =>
        (await manager.query<{ transaction_isolation: string }[]>('SHOW transaction_isolation'))[0]
          ?.transaction_isolation,
      { isolation: 'SERIALIZABLE' },
    );
    expect(isolation).toBe('serializable');
  });

  it('answers statements queued together on one connection in order', async () => {
    await onOneConnection(dataSource, async (runner) => {
      await runner.startTransaction();
      const answers = await Promise.all(
        [1, 2, 3].map((n) => runner.query('SELECT $1::int AS n', [n])),
      );
      await runner.commitTransaction();
      expect(answers).toEqual([[{ n: 1 }], [{ n: 2 }], [{ n: 3 }]]);
    });
  });

  describe('a last write sent with the COMMIT (sendWithNext)', () => {
    it('goes out with the COMMIT: a transaction of a statement and a last write is two writes', async () => {
      await onOneConnection(dataSource, async (runner) => {
        const flushes = countFlushes(runner);
        await runner.startTransaction();
        await runner.query('INSERT INTO rows VALUES ($1)', [1]);
        await sendWithNext(runner.manager, 'INSERT INTO rows VALUES ($1)', [2]);
        await runner.commitTransaction();
        expect(flushes()).toBe(2);
      });
      expect(await count(dataSource)).toBe(2);
    });

    it('fails the COMMIT with its own error when it fails, and keeps nothing of the transaction', async () => {
      await dataSource.query('INSERT INTO rows VALUES (7)');
      await expect(
        runInTransaction(dataSource, async (manager) => {
          await manager.query('INSERT INTO rows VALUES ($1)', [1]);
          await sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [7]);
        }),
      ).rejects.toThrow(/duplicate key value violates unique constraint/);
      expect(await count(dataSource)).toBe(1);
      // The pool's connections are usable afterwards.
      await runInTransaction(dataSource, (manager) =>
        sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [8]),
      );
      expect(await count(dataSource)).toBe(2);
    });

    it('is seen by a statement sent after it, which answers with its error if it failed', async () => {
      const seen = await runInTransaction(dataSource, async (manager) => {
        await sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [1]);
        return manager.query<{ n: string }[]>('SELECT count(*) AS n FROM rows');
      });
      expect(seen).toEqual([{ n: '1' }]);
      await expect(
        runInTransaction(dataSource, async (manager) => {
          await sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [1]);
          await manager.query('SELECT 1');
        }),
      ).rejects.toThrow(/duplicate key value violates unique constraint/);
    });

    it('is undone with a transaction that rolls back', async () => {
      await expect(
        runInTransaction(dataSource, async (manager) => {
          await sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [1]);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await count(dataSource)).toBe(0);
    });

    it('simply runs where the client does not pipeline', async () => {
      const unpipelined = new DataSource(
        dataSourceOptions({ ...db.config, DATABASE_PIPELINING: false }),
      );
      await unpipelined.initialize();
      try {
        await runInTransaction(unpipelined, (manager) =>
          sendWithNext(manager, 'INSERT INTO rows VALUES ($1)', [1]),
        );
        expect(await count(dataSource)).toBe(1);
      } finally {
        await unpipelined.destroy();
      }
    });
  });
});
