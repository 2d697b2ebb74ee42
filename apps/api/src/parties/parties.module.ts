import { Module } from '@nestjs/common';
import { TicketsModule } from '@matchplane/tickets';
import { IdempotencyModule } from '@matchplane/idempotency';
import { LatenciesModule } from '@matchplane/latency';
import { QueuePolicyModule } from '../queue/queue-policy.module';
import { PartiesController } from './parties.controller';
import { PartyService } from './party.service';
import { PartyStore } from './party.store';

/** Owns `parties` and `party_members`; the queue's party enqueue uses PartyService. */
@Module({
  imports: [TicketsModule, IdempotencyModule, LatenciesModule, QueuePolicyModule],
  controllers: [PartiesController],
  providers: [PartyStore, PartyService],
  exports: [PartyService],
})
export class PartiesModule {}
