import { IsOptional, Matches } from 'class-validator';
import { EnvVar, ServiceConfig } from '@matchplane/config';

/** Operator names, as in OPERATOR_TOKENS. */
export const ACTOR_PATTERN = /^[A-Za-z0-9_.@-]{1,100}$/;

/** The flags every audited operator CLI (live-ops, rule-sets) takes, for node:util parseArgs. */
export const OPERATOR_CLI_FLAGS = {
  reason: { type: 'string' },
  actor: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

/**
 * The `dlq` CLI: the database (it is trusted like a migration, so no operator token) and Redis,
 * only to wake the relay after a replay.
 */
export class DlqConfig extends ServiceConfig {
  @EnvVar({
    description:
      'Who runs the dlq CLI: the audited actor of replays and discards unless --actor is given',
  })
  @IsOptional()
  @Matches(ACTOR_PATTERN, { message: 'must be 1-100 letters, digits, "_", ".", "@" or "-"' })
  OPERATOR_NAME?: string = undefined;
}
