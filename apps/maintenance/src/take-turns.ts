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

/** What every pass of turns reports before its own figures. */
export interface TurnsPassReport {
  /** The instant the pass measured ages from. */
  now: Date;
  outcome: TurnsOutcome;
  durationMs: number;
  /** Turns taken: one bounded batch each. */
  batches: number;
}

/**
 * A timed pass of {@link takeTurns} within `budgetMs`, measured from `now` (by default
 * {@link databaseNow}); each turn is told that instant (`at`), the pass's `deadline` and
 * `onlyOneLeft`. `conclude` adds the pass's own figures to its report; the pass's duration
 * includes it.
 */
export async function passOfTurns<T, Figures extends object>(
  dataSource: DataSource,
  limits: { readonly now?: Date; readonly signal?: AbortSignal; readonly budgetMs: number },
  items: readonly T[],
  turn: (item: T, pass: { at: Date; deadline: number; onlyOneLeft: boolean }) => Promise<boolean>,
  conclude: (outcome: TurnsOutcome, at: Date) => Promise<Figures>,
): Promise<TurnsPassReport & Figures> {
  const started = performance.now();
  const deadline = started + limits.budgetMs;
  const at = limits.now ?? (await databaseNow(dataSource));
  let batches = 0;
  const outcome = await takeTurns(
    items,
    { deadline, signal: limits.signal },
    (item, onlyOneLeft) => {
      batches += 1;
      return turn(item, { at, deadline, onlyOneLeft });
    },
  );
  const figures = await conclude(outcome, at);
  const durationMs = Math.round(performance.now() - started);
  return { now: at, outcome, durationMs, batches, ...figures };
}
