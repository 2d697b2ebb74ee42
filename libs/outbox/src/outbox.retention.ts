import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

/*
 * When the oldest dead letter was written is read by other owners through the `oldest_dead_letter`
 * view (migration 1764710000000), e.g. idempotency keys a replayed dead letter could re-drive.
 */

/** Dead letters are kept longest (the maintenance app refuses windows that say otherwise). */
const OUTBOX_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
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
export class OutboxRetention extends RetentionOwner {
  readonly policies = OUTBOX_RETENTION_POLICIES;
}

/** The outbox's retention, for the maintenance app to discover. */
@Module({ providers: [OutboxRetention] })
export class OutboxRetentionModule {}
