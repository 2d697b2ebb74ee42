import type { DataSource } from 'typeorm';
import { afterCommit, runInTransaction, UnitOfWork } from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe(UnitOfWork.name, () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    dataSource = await db.dataSource();
    await dataSource.query('CREATE TABLE notes (id int PRIMARY KEY)');
  });

  afterAll(() => db.drop());

  beforeEach(() => dataSource.query('TRUNCATE notes'));

  /** What another connection sees: committed rows only. */
  const committedIds = async () =>
    (await dataSource.query<{ id: number }[]>('SELECT id FROM notes ORDER BY id')).map(
      (row) => row.id,
    );

  it('runs a registered effect once the transaction committed, and sees what it wrote', async () => {
    const seen: number[][] = [];
    const result = await runInTransaction(dataSource, async (manager) => {
      await manager.query('INSERT INTO notes VALUES (1)');
      await afterCommit(manager, 'look', async () => {
        seen.push(await committedIds());
      });
      expect(seen).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual([[1]]);
  });

  it('runs an effect registered twice under one key once, the last registration, in its order', async () => {
    const ran: string[] = [];
    await runInTransaction(dataSource, async (manager) => {
      await afterCommit(manager, 'wake', () => void ran.push('wake 1'));
      await afterCommit(manager, 'ticket', () => void ran.push('ticket'));
      await afterCommit(manager, 'wake', () => void ran.push('wake 2'));
    });
    expect(ran).toEqual(['ticket', 'wake 2']);
  });

  it('runs a batch once with every item, one per item key (its last registration)', async () => {
    const runs: string[][] = [];
    const run = (items: readonly string[]) => void runs.push([...items]);
    await runInTransaction(dataSource, (manager, unit) => {
      unit.afterCommitBatch('tickets', 'a', 'a@1', run);
      unit.afterCommitBatch('tickets', 'b', 'b@1', run);
      unit.afterCommitBatch('tickets', 'a', 'a@2', run);
      expect(runs).toEqual([]);
      return Promise.resolve();
    });
    expect(runs).toEqual([['b@1', 'a@2']]);
    await expect(
      runInTransaction(dataSource, (manager, unit) => {
        unit.afterCommitBatch('tickets', 'd', 'd@1', run);
        return Promise.reject(new Error('changed my mind'));
      }),
    ).rejects.toThrow('changed my mind');
    expect(runs).toHaveLength(1);
  });

  it('answers without waiting for an effect registered as not awaited, unless the batch also has an awaited one', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const slow = async (items: readonly string[]) => {
      await released;
      ran.push(...items);
    };
    await runInTransaction(dataSource, (manager, unit) => {
      unit.afterCommitBatch('candidates', 'a', 'a', slow, { awaited: false });
      return Promise.resolve();
    });
    expect(ran).toEqual([]);
    release();
    await released;
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['a']);

    let releaseMixed!: () => void;
    const mixedReleased = new Promise<void>((resolve) => (releaseMixed = resolve));
    const gated = async (items: readonly string[]) => {
      await mixedReleased;
      ran.push(...items);
    };
    const mixed = runInTransaction(dataSource, (manager, unit) => {
      unit.afterCommitBatch('candidates', 'b', 'b', gated);
      unit.afterCommitBatch('candidates', 'c', 'c', gated, { awaited: false });
      return Promise.resolve();
    });
    let settled = false;
    void mixed.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    releaseMixed();
    await mixed;
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('refuses a registration on a unit whose transaction ended (it would be dropped unseen)', async () => {
    const kept = await runInTransaction(dataSource, (manager, unit) => Promise.resolve(unit));
    expect(() => kept.afterCommit('late', () => undefined)).toThrow(
      'after-commit effect late registered on a closed unit of work',
    );
  });

  it('drops the effects of a transaction that rolled back', async () => {
    const ran: string[] = [];
    await expect(
      runInTransaction(dataSource, async (manager) => {
        await manager.query('INSERT INTO notes VALUES (2)');
        await afterCommit(manager, 'wake', () => void ran.push('wake'));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(ran).toEqual([]);
    expect(await committedIds()).toEqual([]);
  });

  it('drops the effects of an attempt that is retried, keeping the committed attempt’s', async () => {
    const ran: number[] = [];
    let attempt = 0;
    await runInTransaction(
      dataSource,
      async (manager) => {
        attempt += 1;
        const mine = attempt;
        await afterCommit(manager, 'attempt', () => void ran.push(mine));
        if (mine === 1) throw Object.assign(new Error('serialization failure'), { code: '40001' });
      },
      { baseDelayMs: 1 },
    );
    expect(ran).toEqual([2]);
  });

  it('runs an effect at once for a statement outside a unit of work (it committed by itself)', async () => {
    const ran: string[] = [];
    await dataSource.manager.query('INSERT INTO notes VALUES (3)');
    await afterCommit(dataSource.manager, 'wake', () => void ran.push('wake'));
    expect(ran).toEqual(['wake']);
  });

  it('ends with its transaction: a reused connection’s later statements are not held back', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      const unit = UnitOfWork.open(runner.manager);
      const ran: string[] = [];
      await afterCommit(runner.manager, 'held', () => void ran.push('held'));
      unit.close();
      await afterCommit(runner.manager, 'later', () => void ran.push('later'));
      expect(ran).toEqual(['later']);
      await unit.runEffects();
      expect(ran).toEqual(['later', 'held']);
    } finally {
      await runner.release();
    }
  });
});
