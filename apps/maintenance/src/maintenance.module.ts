import { Module, type DynamicModule } from '@nestjs/common';
import type { MaintenanceConfig } from './maintenance.config';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { ReconciliationModule } from './reconciliation/reconciliation.module';
import { RetentionModule } from './retention/retention.module';

@Module({})
export class MaintenanceModule {
  /** Throws a ConfigError when the retention windows are inconsistent. */
  static forRoot(config: MaintenanceConfig): DynamicModule {
    return {
      module: MaintenanceModule,
      imports: [
        ServiceRuntimeModule.forWorker(config, { appName: 'maintenance' }),
        RetentionModule.forRoot(config),
        ReconciliationModule.forRoot(config),
      ],
    };
  }
}
