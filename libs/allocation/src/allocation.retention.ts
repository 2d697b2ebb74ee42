import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  type RetentionContribution,
  type RetentionHold,
} from '@matchplane/persistence';

/** A live allocation means a server not yet released; its row (and its match's) is how it gets released. */
export const ALLOCATION_RETENTION_HOLDS: readonly RetentionHold[] = [
  {
    table: 'matches',
    reason: 'its allocation is still live',
    guard: (alias) => `NOT EXISTS (SELECT 1 FROM allocations a
                    WHERE a.match_id = ${alias}.id AND a.state IN ('REQUESTED', 'ALLOCATED'))`,
  },
];

@RetainsRows()
@Injectable()
export class AllocationRetention implements RetentionContribution {
  readonly retentionHolds = ALLOCATION_RETENTION_HOLDS;
}

/** Allocations' hold on their matches, for the maintenance app to discover. */
@Module({ providers: [AllocationRetention] })
export class AllocationRetentionModule {}
