import { Module, type DynamicModule } from '@nestjs/common';
import type { AllocatorConfig } from '@matchplane/config';
import { ServiceRuntimeModule } from '@matchplane/observability';

@Module({})
export class AllocatorModule {
  static forRoot(config: AllocatorConfig): DynamicModule {
    return {
      module: AllocatorModule,
      imports: [ServiceRuntimeModule.forWorker(config, { appName: 'allocator' })],
    };
  }
}
