import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/**
 * Finished matches; deleting one cascades its participants (and its allocation's rows). A match
 * whose allocation is still live stays (libs/allocation's `live_allocations` view): its server is
 * not released yet, and its row is how it gets released.
 */
const MATCH_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'matches',
    table: 'matches',
    alias: 'm',
    window: 'RETENTION_MATCHES_SECONDS',
    index: 'matches_finished_at_idx',
    age: 'finished_at',
    guards: [`NOT EXISTS (SELECT 1 FROM live_allocations l WHERE l.match_id = m.id)`],
  },
];

@RetainsRows()
@Injectable()
export class MatchRetention extends RetentionOwner {
  readonly policies = MATCH_RETENTION_POLICIES;
}

/** Matches' retention, for the maintenance app to discover. */
@Module({ providers: [MatchRetention] })
export class MatchRetentionModule {}
