import type { DataSource } from 'typeorm';
import { oneItemPerTransaction } from '@matchplane/persistence';
import { createTestDatabase, type TestDatabase } from '../support/database';

/*
 * The loop the one-aggregate-per-transaction reconciliation stages share (abandonment, ready-check
 * timeouts, silent servers, stuck matches): what it counts, what it leaves alone after a failure,
 * and when it stops the stage.
 */
describe('oneItemPerTransaction', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
  });
  afterAll(() => db?.drop());

  /** Items claimed in order, skipping those left alone; `fail` ones throw after being claimed. */
  function queue(items: string[], fail: ReadonlySet<string> = new Set()) {
    const seen: string[] = [];
    return {
      seen,
      work: (
        _manager: unknown,
        _unit: unknown,
        leftAlone: ReadonlySet<string>,
        claim: (id: string) => void,
      ) => {
        const next = items.find((item) => !leftAlone.has(item) && !seen.includes(item));
        if (next === undefined) return Promise.resolve(false as const);
        claim(next);
        if (fail.has(next)) return Promise.reject(new Error(`cannot end ${next}`));
        seen.push(next);
        return Promise.resolve(next.startsWith('x') ? 'case_x' : 'case_y');
      },
    };
  }

  it('counts each committed item under its case and stops when none is left', async () => {
    const { work } = queue(['x1', 'y1', 'x2']);
    expect(await oneItemPerTransaction(ds, 10, new Set(), work)).toEqual({
      reconciled: { case_x: 2, case_y: 1 },
      taken: 3,
      failures: [],
    });
  });

  it('reports a failed item, leaves it alone for the rest of the batch and goes on', async () => {
    const { work, seen } = queue(['x1', 'x2', 'x3'], new Set(['x2']));
    const batch = await oneItemPerTransaction(ds, 10, new Set(['x3']), work);
    expect(seen).toEqual(['x1']);
    expect(batch.taken).toBe(2);
    expect(batch.reconciled).toEqual({ case_x: 1 });
    expect(batch.failures).toEqual([
      expect.objectContaining({ id: 'x2', message: 'cannot end x2' }),
    ]);
  });

  it('takes at most the batch size', async () => {
    const { work, seen } = queue(['x1', 'x2', 'x3']);
    expect((await oneItemPerTransaction(ds, 2, new Set(), work)).taken).toBe(2);
    expect(seen).toEqual(['x1', 'x2']);
  });

  it('throws a failure before any item was claimed: the stage stops for this pass', async () => {
    await expect(
      oneItemPerTransaction(ds, 10, new Set(), () => Promise.reject(new Error('database down'))),
    ).rejects.toThrow('database down');
  });
});
