import { Injectable, Module } from '@nestjs/common';
import { OLDEST_DEAD_LETTER_CREATED_AT_SQL } from '@matchplane/outbox';
import {
  RetainsRows,
  type RetentionContribution,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/**
 * An idempotency key younger than the oldest dead letter (less a margin) may be re-driven by that
 * dead letter's replay, so it stays whatever its age. Evaluated in each batch's own statement, so
 * a row dead-lettered during a pass holds the keys back at once.
 */
export const IDEMPOTENCY_DEAD_LETTER_GUARD = `k.created_at < COALESCE(
            ${OLDEST_DEAD_LETTER_CREATED_AT_SQL}
              - make_interval(secs => $3::float8),
            'infinity')`;

export const IDEMPOTENCY_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'idempotency_keys',
    table: 'idempotency_keys',
    alias: 'k',
    window: 'RETENTION_IDEMPOTENCY_KEYS_SECONDS',
    index: 'idempotency_keys_created_at_idx',
    age: 'created_at',
    guards: [IDEMPOTENCY_DEAD_LETTER_GUARD],
    extraParams: (windows) => [windows.RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS],
  },
];

@RetainsRows()
@Injectable()
export class IdempotencyRetention implements RetentionContribution {
  readonly retentionPolicies = IDEMPOTENCY_RETENTION_POLICIES;
}

/** Idempotency keys' retention, for the maintenance app to discover. */
@Module({ providers: [IdempotencyRetention] })
export class IdempotencyRetentionModule {}
