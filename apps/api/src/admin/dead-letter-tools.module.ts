import { Module } from '@nestjs/common';
import { DeadLetterService, OutboxModule, OutboxStatsService } from '@matchplane/outbox';
import { AuditModule } from '@matchplane/persistence';

/**
 * The outbox's operator services, shared by the admin routes and the `dlq` CLI. Like every module
 * on the database, it expects the process's PersistenceModule and RedisModule (the app's, or the
 * CLI's forDataSource and forWakeUps).
 */
@Module({
  imports: [OutboxModule.forWriters(), AuditModule],
  providers: [DeadLetterService, OutboxStatsService],
  exports: [DeadLetterService, OutboxStatsService],
})
export class DeadLetterToolsModule {}
