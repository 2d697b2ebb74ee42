import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { MaintenanceConfig } from '../maintenance.config';
import { MatchRetentionModule } from '@matchplane/matches';
import { OutboxRetentionModule, OutboxStatsService } from '@matchplane/outbox';
import { SessionRetentionModule } from '@matchplane/players';
import { TicketRetentionModule } from '@matchplane/tickets';
import { IdempotencyRetentionModule } from '@matchplane/idempotency';
import { ProbeRetentionModule } from '@matchplane/latency';
import { RetentionPolicyRegistry } from './retention-policy.registry';
import { assertRetentionWindows } from './retention-policy';
import { RetentionMetrics } from './retention.metrics';
import { RetentionPurger, type RetentionPurgerOptions } from './retention.purger';
import { RetentionScheduler } from './retention.scheduler';

export function retentionPurgerOptions(config: MaintenanceConfig): RetentionPurgerOptions {
  assertRetentionWindows(config);
  return {
    windows: config,
    batchSize: config.RETENTION_BATCH_SIZE,
    passBudgetMs: config.RETENTION_PASS_BUDGET_MS,
    batchPauseMs: config.RETENTION_BATCH_PAUSE_MS,
    pressurePauseMs: config.RETENTION_PRESSURE_PAUSE_MS,
    pressureLockWaiters: config.RETENTION_PRESSURE_LOCK_WAITERS,
  };
}

/** The modules whose tables the app purges: each declares its policies and holds (`@RetainsRows()`). */
export const RETENTION_OWNER_MODULES = [
  OutboxRetentionModule,
  IdempotencyRetentionModule,
  SessionRetentionModule,
  ProbeRetentionModule,
  MatchRetentionModule,
  TicketRetentionModule,
];

/**
 * The retention purge loop, its metrics and the outbox figures it reports. The policies come from
 * the owning modules imported here, discovered by {@link RetentionPolicyRegistry}.
 */
@Module({})
export class RetentionModule {
  /** Throws a ConfigError when the windows are inconsistent (dead letters not kept longest). */
  static forRoot(config: MaintenanceConfig): DynamicModule {
    const options = retentionPurgerOptions(config);
    return {
      module: RetentionModule,
      imports: [DiscoveryModule, ...RETENTION_OWNER_MODULES],
      providers: [
        RetentionPolicyRegistry,
        { provide: MaintenanceConfig, useValue: config },
        {
          provide: RetentionPurger,
          inject: [DataSource, RetentionPolicyRegistry],
          useFactory: (dataSource: DataSource, registry: RetentionPolicyRegistry) =>
            new RetentionPurger(dataSource, options, registry.policies),
        },
        OutboxStatsService,
        RetentionMetrics,
        RetentionScheduler,
      ],
      exports: [RetentionPurger, RetentionPolicyRegistry],
    };
  }
}
