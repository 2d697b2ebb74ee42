import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  sqlStateOf,
  type ItemFailure,
  type ReconciliationOptions,
  type ReconciliationStage,
} from '@matchplane/persistence';
import { passOfTurns, type TurnsOutcome, type TurnsPassReport } from '../take-turns';

export interface ReconciliationPassOptions {
  /** The instant deadlines are measured from; by default the database's clock. */
  now?: Date;
  /** Aborting stops the pass before its next batch (shutdown). */
  signal?: AbortSignal;
}

/** complete: nothing was left to reconcile; budget_exhausted: the budget ran out with work left. */
export type ReconciliationPassOutcome = TurnsOutcome;

export interface ReconciliationStageError {
  stage: string;
  sqlState: string | undefined;
  message: string;
}

export interface ReconciliationPassReport extends TurnsPassReport {
  /** Items this reconciler ended (each by the one replica that locked it), every stage's cases in order. */
  reconciled: Record<string, number>;
  /** Items that could not be ended; each is retried at the next pass. */
  itemFailures: (ItemFailure & { stage: string })[];
  /** Stages that stopped for this pass (their batch failed as a whole). */
  stageErrors: ReconciliationStageError[];
}

/**
 * One reconciliation pass: the stages take turns, one bounded batch each per round, so one
 * backlog (thousands of tickets expiring after a client outage) cannot starve the others, until
 * nothing is left or the budget is spent. Stages come in their `order` (ended matches'
 * allocations last, so a match failed in a round has its server released in the same round); the
 * owning modules contribute them (ReconciliationContributions). Any number of reconcilers
 * may run against one database: every item is taken under a SKIP LOCKED row lock.
 */
export class LifecycleReconciler {
  private readonly logger = new Logger(LifecycleReconciler.name);

  constructor(
    private readonly dataSource: DataSource,
    /** Read at each pass: the app's stages are discovered at module init, after this is built. */
    private readonly stageSource: { readonly stages: readonly ReconciliationStage[] },
    private readonly options: Pick<ReconciliationOptions, 'batchSize' | 'passBudgetMs'>,
  ) {}

  /** In the order a round takes them. */
  get stages(): readonly ReconciliationStage[] {
    return this.stageSource.stages;
  }

  /** Every case the stages count, in the order a pass reports them. */
  get cases(): string[] {
    return this.stages.flatMap((stage) => stage.cases);
  }

  async pass({ now, signal }: ReconciliationPassOptions = {}): Promise<ReconciliationPassReport> {
    const reconciled = Object.fromEntries(this.cases.map((name) => [name, 0]));
    const itemFailures: ReconciliationPassReport['itemFailures'] = [];
    const stageErrors: ReconciliationStageError[] = [];
    const skip = new Map(this.stages.map((stage) => [stage.name, new Set<string>()]));

    return passOfTurns(
      this.dataSource,
      { now, signal, budgetMs: this.options.passBudgetMs },
      this.stages,
      async (stage, { at }) => {
        const leftAlone = skip.get(stage.name) ?? new Set<string>();
        try {
          const batch = await stage.batch(at, leftAlone);
          for (const [name, count] of Object.entries(batch.reconciled)) {
            reconciled[name] = (reconciled[name] ?? 0) + count;
          }
          for (const failure of batch.failures) {
            leftAlone.add(failure.id);
            itemFailures.push({ stage: stage.name, ...failure });
            this.logger.warn(
              `${stage.name}: ${failure.id} left for the next pass (${failure.sqlState ?? 'no SQLSTATE'}): ${failure.message}`,
            );
          }
          return batch.taken >= this.options.batchSize;
        } catch (error) {
          const message = error instanceof Error ? error.message || error.name : String(error);
          stageErrors.push({ stage: stage.name, sqlState: sqlStateOf(error), message });
          return false;
        }
      },
      () => Promise.resolve({ reconciled, itemFailures, stageErrors }),
    );
  }
}
