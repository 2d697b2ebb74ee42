import { Module } from '@nestjs/common';
import { DeadLetterService, OutboxModule, OutboxStatsService } from '@matchplane/outbox';
import { AuditModule } from '@matchplane/persistence';

/**
 * The outbox's operator services, shared by the admin routes and the `dlq` CLI. Expects the
 * process's DataSource, Redis and ServiceConfig from a global module
 * (ServiceRuntimeModule in the API, DlqRuntimeModule in the CLI).
 */
@Module({
  imports: [OutboxModule.forWriters(), AuditModule],
  providers: [DeadLetterService, OutboxStatsService],
  exports: [DeadLetterService, OutboxStatsService],
})
export class DeadLetterToolsModule {}
