import { Module } from '@nestjs/common';
import { OutboxModule } from '@matchplane/outbox';
import { CandidateProjection } from './candidate.projection';
import { QueueControls } from './queue-controls.store';
import { QueueWaitEstimates } from './queue-wait.estimates';
import { RuleMisfitTickets } from './rule-misfit.tickets';
import { TicketArrivals } from './ticket-arrivals';
import { TicketLiveness } from './ticket-liveness';
import { TicketLivenessCheckpoint } from './ticket-liveness.checkpoint';
import { TicketStore } from './ticket.store';

/** Provided here and exported whole: other modules use every one of them. */
const TICKET_SERVICES = [
  TicketStore,
  CandidateProjection,
  TicketLiveness,
  TicketLivenessCheckpoint,
  QueueWaitEstimates,
  QueueControls,
  TicketArrivals,
  RuleMisfitTickets,
];

/**
 * Owns `queue_tickets` (and the operator holds on the queue, `queue_controls`) and its read model, the candidate projection in Redis, with the tickets' liveness beside it (TicketLiveness, checkpointed by TicketLivenessCheckpoint). Other modules
 * change tickets only through TicketStore and keep the projection current through
 * CandidateProjection after their transaction commits.
 */
@Module({
  imports: [OutboxModule.forWriters()],
  providers: TICKET_SERVICES,
  exports: TICKET_SERVICES,
})
export class TicketsModule {}
