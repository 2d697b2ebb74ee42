import { Injectable, Module } from '@nestjs/common';
import {
  RetainsRows,
  RetentionOwner,
  type RetentionPolicyDefinition,
} from '@matchplane/persistence';

const SESSION_RETENTION_POLICIES: readonly RetentionPolicyDefinition[] = [
  {
    name: 'sessions_expired',
    table: 'sessions',
    alias: 's',
    window: 'RETENTION_SESSIONS_SECONDS',
    index: 'sessions_expires_at_idx',
    age: 'expires_at',
  },
  {
    name: 'sessions_revoked',
    table: 'sessions',
    alias: 's',
    window: 'RETENTION_SESSIONS_SECONDS',
    index: 'sessions_revoked_at_idx',
    age: 'revoked_at',
  },
];

@RetainsRows()
@Injectable()
export class SessionRetention extends RetentionOwner {
  readonly policies = SESSION_RETENTION_POLICIES;
}

/** Sessions' retention, for the maintenance app to discover. */
@Module({ providers: [SessionRetention] })
export class SessionRetentionModule {}
