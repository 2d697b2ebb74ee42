import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MaintenanceConfig } from '../maintenance.config';
import { OutboxStatsService } from '@matchplane/outbox';
import { RetentionOwnersModule, RetentionPolicyRegistry } from './retention-policy.registry';
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

/**
 * The retention purge loop, its metrics and the outbox figures it reports. The policies come from
 * the owning modules {@link RetentionOwnersModule} imports, discovered by
 * {@link RetentionPolicyRegistry}; each owner runs its own batches, this module schedules them.
 */
@Module({})
export class RetentionModule {
  /** Throws a ConfigError when the windows are inconsistent (dead letters not kept longest). */
  static forRoot(config: MaintenanceConfig): DynamicModule {
    const options = retentionPurgerOptions(config);
    return {
      module: RetentionModule,
      imports: [RetentionOwnersModule],
      providers: [
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
      exports: [RetentionPurger, RetentionOwnersModule],
    };
  }
}
