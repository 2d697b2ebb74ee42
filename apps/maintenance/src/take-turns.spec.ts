import type { DataSource } from 'typeorm';
import { passOfTurns, takeTurns } from './take-turns';

describe('takeTurns', () => {
  const far = () => performance.now() + 60_000;

  it('gives every item a turn per round until each is done, so one backlog starves no other', async () => {
    const left = new Map([
      ['a', 3],
      ['b', 1],
      ['c', 2],
    ]);
    const order: string[] = [];
    const outcome = await takeTurns([...left.keys()], { deadline: far() }, (item) => {
      order.push(item);
      const remaining = left.get(item)! - 1;
      left.set(item, remaining);
      return Promise.resolve(remaining > 0);
    });
    expect(outcome).toBe('complete');
    expect(order).toEqual(['a', 'b', 'c', 'a', 'c', 'a']);
  });

  it('tells a turn when no other item wants one', async () => {
    const seen: [string, boolean][] = [];
    await takeTurns(['a', 'b'], { deadline: far() }, (item, onlyOneLeft) => {
      seen.push([item, onlyOneLeft]);
      return Promise.resolve(item === 'a' && seen.length < 3);
    });
    expect(seen).toEqual([
      ['a', false],
      ['b', false],
      ['a', true],
    ]);
  });

  it('stops when the budget is spent or the signal aborts, before the next turn', async () => {
    let turns = 0;
    const spent = await takeTurns(['a'], { deadline: performance.now() - 1 }, () => {
      turns += 1;
      return Promise.resolve(true);
    });
    expect([spent, turns]).toEqual(['budget_exhausted', 0]);

    const controller = new AbortController();
    const interrupted = await takeTurns(
      ['a', 'b'],
      { deadline: far(), signal: controller.signal },
      () => {
        turns += 1;
        controller.abort();
        return Promise.resolve(true);
      },
    );
    expect([interrupted, turns]).toEqual(['interrupted', 1]);
  });
});

describe('passOfTurns', () => {
  const databaseClock = new Date('2026-01-01T00:00:00Z');
  const dataSource = {
    query: () => Promise.resolve([{ now: databaseClock }]),
  } as unknown as DataSource;

  it("measures from the database's clock, counts every turn and adds the pass's own figures to its report", async () => {
    const told: Date[] = [];
    let left = 3;
    const report = await passOfTurns(
      dataSource,
      { budgetMs: 60_000 },
      ['a'],
      (_item, { at }) => {
        told.push(at);
        left -= 1;
        return Promise.resolve(left > 0);
      },
      (outcome, at) => Promise.resolve({ concluded: [outcome, at] }),
    );
    expect(told).toEqual([databaseClock, databaseClock, databaseClock]);
    expect(report).toEqual({
      now: databaseClock,
      outcome: 'complete',
      durationMs: expect.any(Number) as number,
      batches: 3,
      concluded: ['complete', databaseClock],
    });
  });

  it('measures from the instant it is given and counts the time its conclusion takes', async () => {
    const given = new Date('2026-02-01T00:00:00Z');
    const report = await passOfTurns(
      dataSource,
      { now: given, budgetMs: 60_000 },
      [],
      () => Promise.resolve(false),
      () => new Promise<object>((resolve) => setTimeout(() => resolve({}), 30)),
    );
    expect(report.now).toBe(given);
    expect(report.durationMs).toBeGreaterThanOrEqual(29);
  });
});
