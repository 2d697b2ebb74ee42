import { Module, type DynamicModule, type ModuleMetadata, type Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { parseQueueModes, parseSearchTimeouts } from '@matchplane/config';
import {
  AllocationReconciliation,
  AllocationReconciliationModule,
  AllocationReleaser,
} from '@matchplane/allocation';
import {
  MatchReconciliation,
  MatchReconciliationModule,
  type MatchLifecycle,
  type MatchPresenceService,
} from '@matchplane/matches';
import { OutboxModule } from '@matchplane/outbox';
import { noShowPenaltyPolicy } from '@matchplane/players';
import {
  TicketReconciliation,
  TicketReconciliationModule,
  TicketsModule,
  type TicketLiveness,
  type TicketStore,
} from '@matchplane/tickets';
import { MaintenanceConfig } from '../maintenance.config';
import { LifecycleReconciler } from './lifecycle.reconciler';
import { LivenessCheckpointScheduler } from './liveness-checkpoint.scheduler';
import { QueuedAllocationReleaser } from './queued-allocation.releaser';
import {
  assembleReconciliationStages,
  RECONCILIATION_OPTIONS,
  ReconciliationStages,
  type MaintenanceReconciliationOptions,
} from './reconciliation-stage.registry';
import { ReconciliationMetrics } from './reconciliation.metrics';
import { ReconciliationScheduler } from './reconciliation.scheduler';

export function reconciliationOptions(config: MaintenanceConfig): MaintenanceReconciliationOptions {
  return {
    batchSize: config.RECONCILE_BATCH_SIZE,
    passBudgetMs: config.RECONCILE_PASS_BUDGET_MS,
    heartbeatTimeoutMs: config.TICKET_HEARTBEAT_TIMEOUT_MS,
    allocatingTimeoutMs: config.RECONCILE_ALLOCATING_TIMEOUT_MS,
    connectDeadlineMs: config.RECONCILE_CONNECT_DEADLINE_MS,
    maxMatchDurationMs: config.RECONCILE_MAX_MATCH_DURATION_MS,
    serverHeartbeatTimeoutMs: config.SERVER_HEARTBEAT_TIMEOUT_MS,
    searchTimeoutsMs: Object.fromEntries(
      parseSearchTimeouts(
        config.QUEUE_SEARCH_TIMEOUTS,
        parseQueueModes(config.QUEUE_MODES).map(({ mode }) => mode),
      ),
    ),
    noShowPenalty: noShowPenaltyPolicy(config),
  };
}

export interface ReconciliationModuleOptions {
  /** How a finished match's server is given back (default: {@link QueuedAllocationReleaser}, to the allocator). */
  releaser?: Type<AllocationReleaser>;
  /** Modules the releaser's own dependencies come from (the allocator's provider module, say). */
  imports?: NonNullable<ModuleMetadata['imports']>;
}

/** The maintenance configuration for the releaser's module (QueuedAllocationReleaser reads Redis's). */
@Module({})
class ReconciliationConfigModule {
  static of(config: MaintenanceConfig): DynamicModule {
    return {
      module: ReconciliationConfigModule,
      providers: [{ provide: MaintenanceConfig, useValue: config }],
      exports: [MaintenanceConfig],
    };
  }
}

export interface ReconciliationDependencies {
  dataSource: DataSource;
  tickets: TicketStore;
  liveness: TicketLiveness;
  lifecycle: MatchLifecycle;
  presence: MatchPresenceService;
  releaser: AllocationReleaser;
}

/**
 * The reconciler the module builds, from the same contributions, for a caller outside Nest (tests
 * over another replica's pool, say).
 */
export function buildLifecycleReconciler(
  deps: ReconciliationDependencies,
  options: MaintenanceReconciliationOptions,
): LifecycleReconciler {
  const contributions = [
    new TicketReconciliation(deps.dataSource, deps.tickets, deps.liveness),
    new MatchReconciliation(deps.dataSource, deps.lifecycle, deps.presence),
    new AllocationReconciliation(deps.dataSource, deps.lifecycle, deps.releaser),
  ];
  return new LifecycleReconciler(
    deps.dataSource,
    { stages: assembleReconciliationStages(contributions, options) },
    options,
  );
}

/**
 * Lifecycle reconciliation: ends what no live writer will move on, on its own loop. The stages
 * come from the owning modules imported here (`@ReconcilesLifecycle()`: tickets, matches,
 * allocations), each through its own stores. Allocations of ended matches are handed to the
 * allocator for release at their provider (or to `releaser`).
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
        DiscoveryModule,
        OutboxModule.forWriters(),
        TicketReconciliationModule,
        TicketsModule,
        MatchReconciliationModule,
        AllocationReconciliationModule.forReleaser(
          moduleOptions.releaser ?? QueuedAllocationReleaser,
          [ReconciliationConfigModule.of(config), ...(moduleOptions.imports ?? [])],
        ),
      ],
      providers: [
        { provide: MaintenanceConfig, useValue: config },
        { provide: RECONCILIATION_OPTIONS, useValue: options },
        ReconciliationStages,
        {
          provide: LifecycleReconciler,
          inject: [DataSource, ReconciliationStages],
          useFactory: (dataSource: DataSource, stages: ReconciliationStages) =>
            new LifecycleReconciler(dataSource, stages, options),
        },
        ReconciliationMetrics,
        ReconciliationScheduler,
        LivenessCheckpointScheduler,
      ],
      exports: [LifecycleReconciler, AllocationReconciliationModule],
    };
  }
}
