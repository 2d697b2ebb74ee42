import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  type RetentionContribution,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/** Finished tickets; a match that still lists one keeps it (its hold, libs/matches). */
export const TICKET_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'queue_tickets',
    table: 'queue_tickets',
    alias: 't',
    window: 'RETENTION_TICKETS_SECONDS',
    index: 'queue_tickets_finished_at_idx',
    age: 'finished_at',
  },
];

@RetainsRows()
@Injectable()
export class TicketRetention implements RetentionContribution {
  readonly retentionPolicies = TICKET_RETENTION_POLICIES;
}

/** Tickets' retention, for the maintenance app to discover. */
@Module({ providers: [TicketRetention] })
export class TicketRetentionModule {}
