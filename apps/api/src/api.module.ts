import { Module, type DynamicModule } from '@nestjs/common';
import type { ApiConfig } from '@matchplane/config';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { AdminModule } from './admin/admin.module';

@Module({})
export class ApiModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [ServiceRuntimeModule.forApi(config, { appName: 'api' }), AdminModule.forRoot(config)],
    };
  }
}
