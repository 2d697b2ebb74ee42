import type { DataSource } from 'typeorm';
import { runInTransaction, UnitOfWork } from '@matchplane/persistence';
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
    const result = await runInTransaction(dataSource, async (manager, unit) => {
      await manager.query('INSERT INTO notes VALUES (1)');
      unit.afterCommit('look', async () => {
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
    await runInTransaction(dataSource, (manager, unit) => {
      unit.afterCommit('wake', () => void ran.push('wake 1'));
      unit.afterCommit('ticket', () => void ran.push('ticket'));
      unit.afterCommit('wake', () => void ran.push('wake 2'));
      return Promise.resolve();
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
      runInTransaction(dataSource, async (manager, unit) => {
        await manager.query('INSERT INTO notes VALUES (2)');
        unit.afterCommit('wake', () => void ran.push('wake'));
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
      (manager, unit) => {
        attempt += 1;
        const mine = attempt;
        unit.afterCommit('attempt', () => void ran.push(mine));
        if (mine === 1) throw Object.assign(new Error('serialization failure'), { code: '40001' });
        return Promise.resolve();
      },
      { baseDelayMs: 1 },
    );
    expect(ran).toEqual([2]);
  });

  it('holds the effects of a transaction managed by hand until it runs them, and refuses registrations once closed', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      const unit = UnitOfWork.open(runner.manager);
      const ran: string[] = [];
      unit.afterCommit('held', () => void ran.push('held'));
      unit.close();
      expect(() => unit.afterCommit('later', () => void ran.push('later'))).toThrow(
        'after-commit effect later registered on a closed unit of work',
      );
      expect(ran).toEqual([]);
      await unit.runEffects();
      expect(ran).toEqual(['held']);
    } finally {
      await runner.release();
    }
  });
});
