import {
  Injectable,
  Module,
  type DynamicModule,
  type ModuleMetadata,
  type Type,
} from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  MatchesModule,
  MatchLifecycle,
  ServerLossReconciler,
  StuckMatchReconciler,
  type StuckMatchRule,
  type MatchReconciliationOptions,
} from '@matchplane/matches';
import {
  itemFailure,
  ReconcilesLifecycle,
  runBoundedTransaction,
  type ReconciliationContribution,
  type ReconciliationStage,
  type StageBatch,
} from '@matchplane/persistence';
import { AllocationStore, type EndedMatchAllocation } from './allocation.store';

/**
 * ALLOCATING past the timeout: whether a server was allocated (its endpoint stored) but never
 * registered decides the reason: the server's failure, not the provider's. Tickets are requeued
 * either way (neither reason is a player's doing). This module's rule because the fact is its
 * table's (read by the claim through the module's `live_allocations` view).
 */
export const ALLOCATING_MATCH_RULE: StuckMatchRule = {
  stage: 'allocating_matches',
  order: 20,
  cases: ['allocating_allocation_failed', 'allocating_registration_timeout'],
  state: 'ALLOCATING',
  deadlineMs: (options) => options.allocatingTimeoutMs,
  fact: 'server_allocated',
  verdict: (allocated) =>
    allocated
      ? { reason: 'SERVER_REGISTRATION_TIMEOUT', case: 'allocating_registration_timeout' }
      : { reason: 'ALLOCATION_FAILED', case: 'allocating_allocation_failed' },
};

/** A live allocation of a match that has ended, as reconciliation found it. */
export type FinishedMatchAllocation = EndedMatchAllocation;

/**
 * What a release did: the server was given back and the row marked (`released`), the release was
 * handed to whoever holds the provider (`requested`), or such a request is still waiting
 * (`pending`, nothing new done).
 */
export type AllocationReleaseOutcome = 'released' | 'requested' | 'pending';

/**
 * The port through which reconciliation gives a finished match's server back to its provider.
 *
 * `release` runs inside `manager`'s transaction, which holds the allocation row locked (so one
 * replica acts on it). A releaser that lets the server go itself leaves the row RELEASED (or
 * FAILED) in that transaction and answers `released`; one that hands the work on answers
 * `requested`, and the row stays live until the release is done (the next pass asks again if it
 * failed). It must be idempotent by match id: it is asked again at every pass while the row is live.
 */
export abstract class AllocationReleaser {
  abstract release(
    allocation: FinishedMatchAllocation,
    manager: EntityManager,
  ): Promise<AllocationReleaseOutcome>;
}

/** Marks the row released in the caller's transaction; the provider side is the caller's part. */
export function markAllocationReleased(manager: EntityManager, matchId: string): Promise<void> {
  return new AllocationStore().markReleased(manager, matchId);
}

/**
 * Gives the servers of ended matches back through the {@link AllocationReleaser} port, one short
 * transaction per allocation (the provider's answer decides that one row only). A release handed
 * on (to the allocator) keeps the row live until it is done, so an allocation whose release failed
 * is found, and asked for, again at the next pass.
 */
export class AllocationReleaseStage implements ReconciliationStage {
  readonly name = 'finished_allocations';
  /**
   * A live allocation whose match has ended: released at the provider by the releaser itself, or
   * its release handed to the allocator (a new request).
   */
  readonly cases = ['allocation_released', 'allocation_release_requested'] as const;
  /** Last in a round, so a match ended in a round has its server released in the same round. */
  readonly order = 90;
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
        const outcome = await runBoundedTransaction(this.dataSource, async (manager) => {
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

/** Allocations' reconciliation, for the maintenance app to discover. */
@ReconcilesLifecycle()
@Injectable()
export class AllocationReconciliation implements ReconciliationContribution<MatchReconciliationOptions> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly releaser: AllocationReleaser,
  ) {}

  reconciliationStages(options: MatchReconciliationOptions): readonly ReconciliationStage[] {
    return [
      ...new StuckMatchReconciler(this.dataSource, this.lifecycle, options).stages([
        ALLOCATING_MATCH_RULE,
      ]),
      // Server liveness: the heartbeats are this module's fact, so the stage is its contribution.
      new ServerLossReconciler(this.dataSource, this.lifecycle, options),
      new AllocationReleaseStage(this.dataSource, this.releaser, options),
    ];
  }
}

@Module({})
export class AllocationReconciliationModule {
  /**
   * `releaser` is how the app gives servers back (the maintenance app hands releases to the
   * allocator; the allocator could release at its providers itself); `imports` are where the
   * releaser's own dependencies come from.
   */
  static forReleaser(
    releaser: Type<AllocationReleaser>,
    imports: NonNullable<ModuleMetadata['imports']> = [],
  ): DynamicModule {
    return {
      module: AllocationReconciliationModule,
      imports: [MatchesModule, ...imports],
      providers: [{ provide: AllocationReleaser, useClass: releaser }, AllocationReconciliation],
      exports: [AllocationReleaser],
    };
  }
}
