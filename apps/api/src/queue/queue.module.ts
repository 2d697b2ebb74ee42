import { Module } from '@nestjs/common';
import { OutboxModule } from '@matchplane/outbox';
import { TicketsModule } from '@matchplane/tickets';
import { IdempotencyModule } from '@matchplane/idempotency';
import { PartiesModule } from '../parties/parties.module';
import { LatenciesModule } from '@matchplane/latency';
import { QueueController } from './queue.controller';
import { QueuePolicyModule } from './queue-policy.module';
import { QueueAdmission } from './queue-admission';
import { QueueService } from './queue.service';
import { TicketHeartbeats } from './ticket-heartbeats.service';

/** Player queue routes (solo and party tickets); the tickets themselves belong to TicketsModule. */
@Module({
  imports: [
    TicketsModule,
    OutboxModule.forWriters(),
    IdempotencyModule,
    QueuePolicyModule,
    LatenciesModule,
    PartiesModule,
  ],
  controllers: [QueueController],
  providers: [QueueService, TicketHeartbeats, QueueAdmission],
})
export class QueueModule {}
