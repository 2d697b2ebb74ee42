import type { DataSource } from 'typeorm';

/** How a pass of turns ended: every item done, the time budget spent, or stopped by its signal. */
export type TurnsOutcome = 'complete' | 'budget_exhausted' | 'interrupted';

/**
 * Gives each item a turn in order, round after round, until every item is done (its turn answers
 * false), `deadline` (a performance.now() instant) passes or `signal` aborts, so one item's
 * backlog cannot starve the others. `onlyOneLeft`: no other item still wants turns.
 */
export async function takeTurns<T>(
  items: readonly T[],
  limits: { readonly deadline: number; readonly signal?: AbortSignal },
  turn: (item: T, onlyOneLeft: boolean) => Promise<boolean>,
): Promise<TurnsOutcome> {
  let active = [...items];
  while (active.length > 0) {
    for (const item of [...active]) {
      if (limits.signal?.aborted) return 'interrupted';
      if (performance.now() >= limits.deadline) return 'budget_exhausted';
      if (!(await turn(item, active.length === 1)))
        active = active.filter((other) => other !== item);
    }
  }
  return 'complete';
}

/** The database's clock: every replica of a pass measures ages against the same one. */
export async function databaseNow(dataSource: DataSource): Promise<Date> {
  const [row] = await dataSource.query<{ now: Date }[]>(`SELECT now() AS now`);
  if (!row) throw new Error('SELECT now() returned no row');
  return row.now;
}
