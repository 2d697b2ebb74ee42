import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/**
 * Finished tickets; one a match still lists stays (libs/matches' `listed_tickets` view:
 * match_participants.ticket_id has no cascade). It goes after matches in a round, so it goes in
 * the same pass as its match.
 */
const TICKET_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'queue_tickets',
    table: 'queue_tickets',
    alias: 't',
    window: 'RETENTION_TICKETS_SECONDS',
    index: 'queue_tickets_finished_at_idx',
    age: 'finished_at',
    guards: [`NOT EXISTS (SELECT 1 FROM listed_tickets l WHERE l.ticket_id = t.id)`],
    after: ['matches'],
  },
];

@RetainsRows()
@Injectable()
export class TicketRetention extends RetentionOwner {
  readonly policies = TICKET_RETENTION_POLICIES;
}

/** Tickets' retention, for the maintenance app to discover. */
@Module({ providers: [TicketRetention] })
export class TicketRetentionModule {}
