import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { PersistenceModule, RedisModule } from '@matchplane/persistence';
import { DeadLetterToolsModule } from '../admin/dead-letter-tools.module';
import type { DlqConfig } from './dlq.config';

/**
 * The CLI's root: the dead-letter services on the DataSource the CLI opened itself and a Redis
 * connection for the relay's wake-up only (no HTTP, no logging, no health).
 */
@Module({})
export class DlqModule {
  static forRoot(config: DlqConfig, dataSource: DataSource): DynamicModule {
    return {
      module: DlqModule,
      imports: [
        PersistenceModule.forDataSource(dataSource),
        RedisModule.forWakeUps(config, 'matchplane-dlq'),
        DeadLetterToolsModule,
      ],
    };
  }
}
