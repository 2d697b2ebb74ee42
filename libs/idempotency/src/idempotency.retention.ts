import { Injectable, Module } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionBatch,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/**
 * An idempotency key younger than the oldest dead letter (less a margin; libs/outbox's
 * `oldest_dead_letter` view) may be re-driven by that dead letter's replay, so it stays whatever
 * its age. Evaluated in each batch's own statement, so a row dead-lettered during a pass holds the
 * keys back at once.
 */
const IDEMPOTENCY_DEAD_LETTER_GUARD = `k.created_at < COALESCE(
            (SELECT d.created_at FROM oldest_dead_letter d)
              - make_interval(secs => $3::float8),
            'infinity')`;

/**
 * How far the oldest dead letter (less a margin) holds the keys' cutoff back, in seconds (0 or
 * negative: not at all; NULL without dead letters). `$1` = the cutoff, `$2` = the margin in seconds.
 */
export const IDEMPOTENCY_HOLD_SQL = `SELECT extract(epoch FROM $1::timestamptz
         - (d.created_at - make_interval(secs => $2::float8)))::float8 AS hold_seconds
  FROM oldest_dead_letter d`;

const MARGIN = 'RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS';

const IDEMPOTENCY_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'idempotency_keys',
    table: 'idempotency_keys',
    alias: 'k',
    window: 'RETENTION_IDEMPOTENCY_KEYS_SECONDS',
    index: 'idempotency_keys_created_at_idx',
    age: 'created_at',
    guards: [IDEMPOTENCY_DEAD_LETTER_GUARD],
    extraParams: (windows) => [windows[MARGIN]],
    // A dead letter leaving its window releases the keys it held in the same pass.
    after: ['outbox_dead_letters'],
  },
];

@RetainsRows()
@Injectable()
export class IdempotencyRetention extends RetentionOwner {
  readonly policies = IDEMPOTENCY_RETENTION_POLICIES;

  /** How far dead letters hold the keys' cutoff back (s; 0 when they do not). */
  override async holdSeconds(
    runner: DataSource | EntityManager,
    { cutoff, windows }: Omit<RetentionBatch, 'limit'>,
  ): Promise<number> {
    const [row] = await runner.query<{ hold_seconds: number | null }[]>(IDEMPOTENCY_HOLD_SQL, [
      cutoff,
      windows[MARGIN],
    ]);
    return Math.max(0, row?.hold_seconds ?? 0);
  }
}

/** Idempotency keys' retention, for the maintenance app to discover. */
@Module({ providers: [IdempotencyRetention] })
export class IdempotencyRetentionModule {}
