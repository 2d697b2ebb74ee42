import { Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MaintenanceConfig } from '../maintenance.config';
import { MatchLifecycle, MatchesModule } from '@matchplane/matches';
import { OutboxModule } from '@matchplane/outbox';
import { noShowPenaltyPolicy } from '@matchplane/players';
import { CandidateProjection, TicketStore, TicketsModule } from '@matchplane/tickets';
import { AllocationReleaseReconciler } from './allocation-release.reconciler';
import { AllocationReleaser } from './allocation.releaser';
import { LifecycleReconciler } from './lifecycle.reconciler';
import { QueuedAllocationReleaser } from './queued-allocation.releaser';
import type { ReconciliationOptions } from './reconciliation-case';
import { ReconciliationMetrics } from './reconciliation.metrics';
import { ReconciliationScheduler } from './reconciliation.scheduler';
import { StuckMatchReconciler } from './stuck-match.reconciler';
import { TicketExpiryReconciler } from './ticket-expiry.reconciler';

export function reconciliationOptions(config: MaintenanceConfig): ReconciliationOptions {
  return {
    batchSize: config.RECONCILE_BATCH_SIZE,
    passBudgetMs: config.RECONCILE_PASS_BUDGET_MS,
    heartbeatTimeoutMs: config.TICKET_HEARTBEAT_TIMEOUT_MS,
    allocatingTimeoutMs: config.RECONCILE_ALLOCATING_TIMEOUT_MS,
    connectDeadlineMs: config.RECONCILE_CONNECT_DEADLINE_MS,
    maxMatchDurationMs: config.RECONCILE_MAX_MATCH_DURATION_MS,
    noShowPenalty: noShowPenaltyPolicy(config),
  };
}

export interface ReconciliationModuleOptions {
  /** How a finished match's server is given back (default: {@link QueuedAllocationReleaser}, to the allocator). */
  releaser?: Type<AllocationReleaser>;
  /** Modules the releaser's own dependencies come from (the allocator's provider module, say). */
  imports?: NonNullable<ModuleMetadata['imports']>;
}

export interface ReconciliationDependencies {
  dataSource: DataSource;
  tickets: TicketStore;
  projection: CandidateProjection;
  lifecycle: MatchLifecycle;
  releaser: AllocationReleaser;
}

/** Every stage, in the order a round takes them (allocations last: see LifecycleReconciler). */
export function buildLifecycleReconciler(
  deps: ReconciliationDependencies,
  options: ReconciliationOptions,
): LifecycleReconciler {
  const { dataSource } = deps;
  return new LifecycleReconciler(
    dataSource,
    [
      new TicketExpiryReconciler(dataSource, deps.tickets, deps.projection, options),
      ...new StuckMatchReconciler(dataSource, deps.lifecycle, options).stages(),
      new AllocationReleaseReconciler(dataSource, deps.releaser, options),
    ],
    options,
  );
}

/**
 * Lifecycle reconciliation: ends what no live writer will move on, through the tickets' and
 * matches' own stores, on its own loop. Allocations of ended matches are handed to the allocator
 * for release at their provider (or to `releaser`).
 */
@Module({})
export class ReconciliationModule {
  static forRoot(
    config: MaintenanceConfig,
    moduleOptions: ReconciliationModuleOptions = {},
  ): DynamicModule {
    const options = reconciliationOptions(config);
    return {
      module: ReconciliationModule,
      imports: [
        OutboxModule.forWriters(),
        TicketsModule,
        MatchesModule,
        ...(moduleOptions.imports ?? []),
      ],
      providers: [
        { provide: MaintenanceConfig, useValue: config },
        {
          provide: AllocationReleaser,
          useClass: moduleOptions.releaser ?? QueuedAllocationReleaser,
        },
        {
          provide: LifecycleReconciler,
          inject: [
            DataSource,
            TicketStore,
            CandidateProjection,
            MatchLifecycle,
            AllocationReleaser,
          ],
          useFactory: (
            dataSource: DataSource,
            tickets: TicketStore,
            projection: CandidateProjection,
            lifecycle: MatchLifecycle,
            releaser: AllocationReleaser,
          ) =>
            buildLifecycleReconciler(
              { dataSource, tickets, projection, lifecycle, releaser },
              options,
            ),
        },
        ReconciliationMetrics,
        ReconciliationScheduler,
      ],
      exports: [LifecycleReconciler, AllocationReleaser],
    };
  }
}
