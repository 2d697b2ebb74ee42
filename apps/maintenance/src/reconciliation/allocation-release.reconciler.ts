import type { DataSource } from 'typeorm';
import { AllocationStore } from '@matchplane/allocation';
import { runInTransaction } from '@matchplane/persistence';
import type { AllocationReleaser } from './allocation.releaser';
import {
  boundTransaction,
  itemFailure,
  type ReconciliationStage,
  type StageBatch,
} from './reconciliation-case';

/**
 * Gives the servers of ended matches back through the {@link AllocationReleaser} port, one short
 * transaction per allocation (the provider's answer decides that one row only). A release handed
 * on (to the allocator) keeps the row live until it is done, so an allocation whose release failed
 * is found, and asked for, again at the next pass.
 */
export class AllocationReleaseReconciler implements ReconciliationStage {
  readonly name = 'finished_allocations';
  // Stateless: the store's statements run in the manager they are given.
  private readonly allocations = new AllocationStore();

  constructor(
    private readonly dataSource: DataSource,
    private readonly releaser: AllocationReleaser,
    private readonly options: { batchSize: number },
  ) {}

  async batch(_now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    const candidates = await this.allocations.endedMatchesWithLiveAllocation(
      this.dataSource.manager,
      this.options.batchSize,
      [...skip],
    );
    const result: StageBatch = { reconciled: {}, taken: candidates.length, failures: [] };
    const outcomes = { released: 0, requested: 0 };
    for (const matchId of candidates) {
      try {
        const outcome = await runInTransaction(this.dataSource, async (manager) => {
          await boundTransaction(manager);
          const allocation = await this.allocations.lockEndedMatchAllocation(manager, matchId);
          return allocation ? this.releaser.release(allocation, manager) : undefined;
        });
        if (outcome === 'released' || outcome === 'requested') outcomes[outcome] += 1;
      } catch (error) {
        result.failures.push(itemFailure(matchId, error));
      }
    }
    result.reconciled.allocation_released = outcomes.released;
    result.reconciled.allocation_release_requested = outcomes.requested;
    return result;
  }
}
