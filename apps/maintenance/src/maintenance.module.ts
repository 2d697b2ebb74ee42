import { Module, type DynamicModule } from '@nestjs/common';
import type { MaintenanceConfig } from '@matchplane/config';
import { ServiceRuntimeModule } from '@matchplane/observability';

@Module({})
export class MaintenanceModule {
  static forRoot(config: MaintenanceConfig): DynamicModule {
    return {
      module: MaintenanceModule,
      imports: [ServiceRuntimeModule.forWorker(config, { appName: 'maintenance' })],
    };
  }
}
