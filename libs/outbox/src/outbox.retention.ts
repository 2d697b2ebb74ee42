import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  type RetentionContribution,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/**
 * When the oldest dead letter was written (NULL when there is none): a scalar subquery for other
 * owners' statements, e.g. idempotency keys a replayed dead letter could re-drive.
 */
export const OLDEST_DEAD_LETTER_CREATED_AT_SQL = `(SELECT min(o.created_at) FROM outbox o WHERE o.status = 'dead')`;

/**
 * How far the oldest dead letter (less a margin) holds a cutoff back, in seconds (0 or negative:
 * not at all). `$1` = the cutoff, `$2` = the margin in seconds.
 */
export const DEAD_LETTER_HOLD_SQL = `SELECT extract(epoch FROM $1::timestamptz
         - (min(created_at) - make_interval(secs => $2::float8)))::float8 AS hold_seconds
  FROM outbox
 WHERE status = 'dead'`;

/** Dead letters are kept longest (the maintenance app refuses windows that say otherwise). */
export const OUTBOX_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'outbox_dead_letters',
    table: 'outbox',
    alias: 'o',
    window: 'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS',
    index: 'outbox_dead_lettered_at_idx',
    age: 'dead_lettered_at',
    guards: [`o.status = 'dead'`],
  },
  {
    name: 'outbox_published',
    table: 'outbox',
    alias: 'o',
    window: 'RETENTION_OUTBOX_PUBLISHED_SECONDS',
    index: 'outbox_published_at_idx',
    age: 'published_at',
    guards: [`o.status = 'published'`],
  },
];

@RetainsRows()
@Injectable()
export class OutboxRetention implements RetentionContribution {
  readonly retentionPolicies = OUTBOX_RETENTION_POLICIES;
}

/** The outbox's retention, for the maintenance app to discover. */
@Module({ providers: [OutboxRetention] })
export class OutboxRetentionModule {}
