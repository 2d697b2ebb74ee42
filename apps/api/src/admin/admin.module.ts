import { Module, type DynamicModule } from '@nestjs/common';
import { ApiConfig } from '../api.config';
import { DeadLetterToolsModule } from './dead-letter-tools.module';
import { DeadLettersController } from './dead-letters.controller';
import { OperatorGuard } from './operator.guard';
import { OutboxStatsController } from './outbox-stats.controller';

/** Operator routes under /v1/admin and /api/v1/admin, every one behind {@link OperatorGuard}. */
@Module({})
export class AdminModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: [DeadLetterToolsModule],
      controllers: [DeadLettersController, OutboxStatsController],
      providers: [{ provide: ApiConfig, useValue: config }, OperatorGuard],
    };
  }
}
