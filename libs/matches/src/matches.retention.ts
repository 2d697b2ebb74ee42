import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  type RetentionContribution,
  type RetentionHold,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/** Finished matches; deleting one cascades its participants (and its allocation's rows). */
export const MATCH_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'matches',
    table: 'matches',
    alias: 'm',
    window: 'RETENTION_MATCHES_SECONDS',
    index: 'matches_finished_at_idx',
    age: 'finished_at',
  },
];

/**
 * A ticket a match still lists cannot be deleted (match_participants.ticket_id has no cascade);
 * the maintenance app purges matches before tickets, so it goes in the same pass as its match.
 */
export const MATCH_RETENTION_HOLDS: readonly RetentionHold[] = [
  {
    table: 'queue_tickets',
    reason: 'a match still lists the ticket',
    guard: (alias) =>
      `NOT EXISTS (SELECT 1 FROM match_participants p WHERE p.ticket_id = ${alias}.id)`,
  },
];

@RetainsRows()
@Injectable()
export class MatchRetention implements RetentionContribution {
  readonly retentionPolicies = MATCH_RETENTION_POLICIES;
  readonly retentionHolds = MATCH_RETENTION_HOLDS;
}

/** Matches' retention, for the maintenance app to discover. */
@Module({ providers: [MatchRetention] })
export class MatchRetentionModule {}
