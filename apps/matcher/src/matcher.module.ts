import { Module, type DynamicModule } from '@nestjs/common';
import type { MatcherConfig } from '@matchplane/config';
import { ServiceRuntimeModule } from '@matchplane/observability';

@Module({})
export class MatcherModule {
  static forRoot(config: MatcherConfig): DynamicModule {
    return {
      module: MatcherModule,
      imports: [ServiceRuntimeModule.forWorker(config, { appName: 'matcher' })],
    };
  }
}
