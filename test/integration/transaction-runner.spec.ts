import type { DataSource } from 'typeorm';
import {
  runInTransaction,
  sqlStateOf,
  TransactionRetriesExhaustedError,
} from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';

/** Resolves once `parties` callers are waiting on it. */
function barrier(parties: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    waiting += 1;
    if (waiting === parties) release();
    return all;
  };
}

describe(runInTransaction.name, () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = await db.dataSource();
    await dataSource.query('CREATE TABLE counters (id int PRIMARY KEY, value int NOT NULL)');
  });

  afterAll(() => db.drop());

  beforeEach(() => dataSource.query('TRUNCATE counters; INSERT INTO counters VALUES (1, 0)'));

  it('runs at the isolation level asked for, READ COMMITTED by default', async () => {
    const level = (isolation?: 'SERIALIZABLE' | 'REPEATABLE READ') =>
      runInTransaction(
        dataSource,
        async (manager) =>
          (
            await manager.query<{ transaction_isolation: string }[]>('SHOW transaction_isolation')
          )[0]?.transaction_isolation,
        isolation ? { isolation } : {},
      );
    expect(await level()).toBe('read committed');
    expect(await level('SERIALIZABLE')).toBe('serializable');
    expect(await level('REPEATABLE READ')).toBe('repeatable read');
  });

  it('commits without waiting for the disk only when asked, for that transaction alone', async () => {
    const setting = (options: { synchronousCommit?: boolean }) =>
      runInTransaction(
        dataSource,
        async (manager) => {
          await manager.query('UPDATE counters SET value = value + 1 WHERE id = 1');
          return (
            await manager.query<{ synchronous_commit: string }[]>('SHOW synchronous_commit')
          )[0]?.synchronous_commit;
        },
        options,
      );
    expect(await setting({})).toBe('on');
    expect(await setting({ synchronousCommit: false })).toBe('off');
    // SET LOCAL: the connection goes back to the pool with the server's setting.
    expect(await setting({})).toBe('on');
    expect(await setting({ synchronousCommit: true })).toBe('on');
    // Committed all the same, and visible at once.
    const [row] = await dataSource.query<{ value: number }[]>(
      'SELECT value FROM counters WHERE id = 1',
    );
    expect(row?.value).toBe(4);
  });

  it('retries the loser of two conflicting SERIALIZABLE transactions so neither update is lost', async () => {
    const bothHaveRead = barrier(2);
    const retries: string[] = [];
    const attempts = { a: 0, b: 0 };

    const increment = (name: 'a' | 'b') =>
      runInTransaction(
        dataSource,
        async (manager) => {
          attempts[name] += 1;
          const [row] = await manager.query<{ value: number }[]>(
            'SELECT value FROM counters WHERE id = 1',
          );
          // Only the first attempts meet: both read 0, so one of them must fail to serialize.
          if (attempts[name] === 1) await bothHaveRead();
          await manager.query('UPDATE counters SET value = $1 WHERE id = 1', [row!.value + 1]);
        },
        {
          isolation: 'SERIALIZABLE',
          onRetry: ({ sqlState }) => retries.push(`${name}:${sqlState}`),
        },
      );

    await Promise.all([increment('a'), increment('b')]);

    const [row] = await dataSource.query<{ value: number }[]>(
      'SELECT value FROM counters WHERE id = 1',
    );
    expect(row!.value).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(/^[ab]:40001$/);
    expect(attempts.a + attempts.b).toBe(3);
  });

  it('retries a deadlock victim (40P01)', async () => {
    await dataSource.query('INSERT INTO counters VALUES (2, 0)');
    const bothHoldOneLock = barrier(2);
    const retries: string[] = [];
    const attempts = { a: 0, b: 0 };
    const lockBoth = (name: 'a' | 'b', first: number, second: number) =>
      runInTransaction(
        dataSource,
        async (manager) => {
          attempts[name] += 1;
          await manager.query('UPDATE counters SET value = value + 1 WHERE id = $1', [first]);
          if (attempts[name] === 1) await bothHoldOneLock();
          await manager.query('UPDATE counters SET value = value + 1 WHERE id = $1', [second]);
        },
        { onRetry: ({ sqlState }) => retries.push(sqlState) },
      );

    await Promise.all([lockBoth('a', 1, 2), lockBoth('b', 2, 1)]);

    const rows = await dataSource.query<{ value: number }[]>(
      'SELECT value FROM counters ORDER BY id',
    );
    expect(rows.map((r) => r.value)).toEqual([2, 2]);
    expect(retries).toEqual(['40P01']);
  });

  it('gives up after maxAttempts with the last error attached', async () => {
    let attempts = 0;
    const alwaysConflicting = runInTransaction(
      dataSource,
      async (manager) => {
        attempts += 1;
        await manager.query(`DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$`);
      },
      { isolation: 'SERIALIZABLE', maxAttempts: 3, baseDelayMs: 1 },
    );
    await expect(alwaysConflicting).rejects.toBeInstanceOf(TransactionRetriesExhaustedError);
    await alwaysConflicting.catch((error: TransactionRetriesExhaustedError) => {
      expect(sqlStateOf(error.lastError)).toBe('40001');
    });
    expect(attempts).toBe(3);
  });

  it('does not retry other errors, and rolls the transaction back', async () => {
    let attempts = 0;
    await expect(
      runInTransaction(dataSource, async (manager) => {
        attempts += 1;
        await manager.query('UPDATE counters SET value = 99 WHERE id = 1');
        await manager.query('INSERT INTO counters VALUES (1, 0)');
      }),
    ).rejects.toMatchObject({ driverError: { code: '23505' } });
    expect(attempts).toBe(1);
    const [row] = await dataSource.query<{ value: number }[]>(
      'SELECT value FROM counters WHERE id = 1',
    );
    expect(row!.value).toBe(0);
  });
});
