import { Module, type DynamicModule } from '@nestjs/common';
import type { DispatcherConfig } from '@matchplane/config';
import { ServiceRuntimeModule } from '@matchplane/observability';

@Module({})
export class DispatcherModule {
  static forRoot(config: DispatcherConfig): DynamicModule {
    return {
      module: DispatcherModule,
      imports: [ServiceRuntimeModule.forWorker(config, { appName: 'dispatcher' })],
    };
  }
}
