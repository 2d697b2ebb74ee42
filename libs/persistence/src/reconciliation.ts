import { SetMetadata } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { runInTransaction, sqlStateOf, type UnitOfWork } from './transaction.runner';

/**
 * Lifecycle reconciliation, as its owners declare it: the module that owns a table contributes the
 * stages that end its rows when no live writer will (`@ReconcilesLifecycle()` on a provider
 * implementing {@link ReconciliationContribution}); the maintenance app discovers them, orders them
 * and takes turns over them. It holds no table's SQL itself.
 *
 * The options are what bounds every stage; an owner's stages take their own knobs (deadlines,
 * penalties) in an interface extending them (libs/tickets' and libs/matches' reconciliation options).
 */
export interface ReconciliationOptions {
  /** Items one batch takes at most. */
  readonly batchSize: number;
  /** No batch starts after this long into a pass (ms). */
  readonly passBudgetMs: number;
}

/** One item a batch took but could not end; it is left alone for the rest of the pass. */
export interface ItemFailure {
  id: string;
  sqlState: string | undefined;
  message: string;
}

export interface StageBatch {
  /** Items ended, by case (one of the stage's {@link ReconciliationStage.cases}). */
  reconciled: Record<string, number>;
  /** Items the batch took (ended or failed); fewer than the batch size: nothing is left. */
  taken: number;
  failures: ItemFailure[];
}

/** One kind of work a pass does in bounded batches. */
export interface ReconciliationStage {
  /** Unique across the deployment; a label of reconciliation_failures_total. */
  readonly name: string;
  /** What the stage ends, one label of reconciliation_reconciled_total each. */
  readonly cases: readonly string[];
  /**
   * Where the stage comes in a round, lowest first: a stage that releases what another ends runs
   * after it (ended matches' allocations after the matches), so both happen in the same round.
   */
  readonly order: number;
  /** One batch at `now`, leaving the ids in `skip` alone (they failed earlier in the pass). */
  batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch>;
}

/** What one owning module contributes, built with the options its stages need. */
export interface ReconciliationContribution<
  O extends ReconciliationOptions = ReconciliationOptions,
> {
  reconciliationStages(options: O): readonly ReconciliationStage[];
}

export const RECONCILES_LIFECYCLE = Symbol('matchplane:reconciles-lifecycle');

/** Marks a provider implementing {@link ReconciliationContribution}, for the maintenance app to discover. */
export const ReconcilesLifecycle = (): ClassDecorator => SetMetadata(RECONCILES_LIFECYCLE, true);

/**
 * Reconciliation never queues behind live traffic for long: a lock it cannot take within this
 * (a ticket a heartbeat is writing, say) fails that item or batch, which the next pass retries.
 */
const LOCK_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 30_000;

async function boundTransaction(manager: EntityManager): Promise<void> {
  await manager.query(
    `SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true)`,
    [`${LOCK_TIMEOUT_MS}ms`, `${STATEMENT_TIMEOUT_MS}ms`],
  );
}

/** `work` in one short transaction, its locks and statements bounded by {@link boundTransaction}. */
export function runBoundedTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager, unit: UnitOfWork) => Promise<T>,
): Promise<T> {
  return runInTransaction(dataSource, async (manager, unit) => {
    await boundTransaction(manager);
    return work(manager, unit);
  });
}

export function itemFailure(id: string, error: unknown): ItemFailure {
  return {
    id,
    sqlState: sqlStateOf(error),
    message: error instanceof Error ? error.message || error.name : String(error),
  };
}

export function cutoff(now: Date, ageMs: number): Date {
  return new Date(now.getTime() - ageMs);
}

/**
 * What one item's transaction does: claims the next item (locked, `leftAlone` skipped) and names
 * it with `claimed`, then ends it; answers the case it reconciled, or false when none is left.
 */
export type OneItemWork = (
  manager: EntityManager,
  unit: UnitOfWork,
  leftAlone: ReadonlySet<string>,
  claimed: (id: string) => void,
) => Promise<string | false>;

/**
 * Up to `batchSize` items, one short (bounded) transaction each, for the stages whose every item
 * is a whole aggregate's change; an item counts under its case once its transaction committed. An
 * item whose transaction fails is reported and left alone for the rest of the batch; a failure
 * before any item was claimed says the database is in trouble and stops the stage for this pass
 * (it is thrown).
 */
export async function oneItemPerTransaction(
  dataSource: DataSource,
  batchSize: number,
  skip: ReadonlySet<string>,
  work: OneItemWork,
): Promise<StageBatch> {
  const leftAlone = new Set(skip);
  const result: StageBatch = { reconciled: {}, taken: 0, failures: [] };
  while (result.taken < batchSize) {
    let claimed: string | undefined;
    let reconciled: string | false;
    try {
      reconciled = await runInTransaction(dataSource, async (manager, unit) => {
        claimed = undefined;
        await boundTransaction(manager);
        return work(manager, unit, leftAlone, (id) => (claimed = id));
      });
    } catch (error) {
      if (claimed === undefined) throw error;
      result.taken += 1;
      result.failures.push(itemFailure(claimed, error));
      leftAlone.add(claimed);
      continue;
    }
    if (reconciled === false) break;
    result.taken += 1;
    result.reconciled[reconciled] = (result.reconciled[reconciled] ?? 0) + 1;
  }
  return result;
}

/**
 * A one-case stage that claims its due rows one at a time with its owner's `claimSql` (`$1` = the
 * moment a row is due by, `$2` = the keys to leave alone, LIMIT 1 ... SKIP LOCKED) and ends each
 * in a short (bounded) transaction of its own ({@link oneItemPerTransaction}). Every claimed row
 * counts under the case (one whose re-read found it moved on included), and every batch reports
 * the case, 0 when nothing was due. The SQL and the ending stay in the module owning the table.
 */
export abstract class RowsEndedOneByOneStage<Row> implements ReconciliationStage {
  readonly cases: readonly string[];
  /** The claim of the next due row: `$1` due by, `$2` keys left alone (text[] or uuid[]). */
  protected abstract readonly claimSql: string;

  protected constructor(
    readonly name: string,
    /** The stage's one case: every claimed row counts under it. */
    readonly reconciledCase: string,
    readonly order: number,
    private readonly dataSource: DataSource,
    private readonly batchSize: number,
  ) {
    this.cases = [reconciledCase];
  }

  /** The key that names the row in `skip` and in failures. */
  protected abstract keyOf(row: Row): string;
  /** Ends the claimed row in its transaction, or leaves it when what it re-reads has moved on. */
  protected abstract end(unit: UnitOfWork, row: Row, now: Date): Promise<void>;

  /** What a row must be due by at `now` to be claimed (`$1`); `now` unless a stage waits longer. */
  protected dueBy(now: Date): Date {
    return now;
  }

  async batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    const batch = await oneItemPerTransaction(
      this.dataSource,
      this.batchSize,
      skip,
      async (manager, unit, leftAlone, claim) => {
        const [row] = await manager.query<Row[]>(this.claimSql, [this.dueBy(now), [...leftAlone]]);
        if (row === undefined) return false;
        claim(this.keyOf(row));
        await this.end(unit, row, now);
        return this.reconciledCase;
      },
    );
    return { ...batch, reconciled: { [this.reconciledCase]: 0, ...batch.reconciled } };
  }
}
