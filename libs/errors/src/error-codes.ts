import { ErrorCode } from '@matchplane/contracts';

/**
 * Stable codes of rule violations in libs/domain. Services and transport mappings switch on
 * these, never on messages; add codes, never repurpose one. (Defined here, beside every other
 * code, so the mappings can be checked complete; libs/domain re-exports it.)
 */
export const DomainErrorCode = {
  /** The aggregate's current state has no exit to the requested state. */
  ILLEGAL_TRANSITION: 'ILLEGAL_TRANSITION',
  /** A requeue was asked for a match failure that does not allow one. */
  REQUEUE_NOT_ALLOWED: 'REQUEUE_NOT_ALLOWED',
  /** An expiry was asked for a ticket whose heartbeat is still within the timeout. */
  HEARTBEAT_NOT_EXPIRED: 'HEARTBEAT_NOT_EXPIRED',
  /** A search timeout was asked for a ticket that has searched for less than the mode's timeout. */
  SEARCH_NOT_TIMED_OUT: 'SEARCH_NOT_TIMED_OUT',
  /** A ticket command names a match other than the ticket's own. */
  MATCH_MISMATCH: 'MATCH_MISMATCH',
  /** Input that can never form a valid aggregate (bad id, duplicate participant, ...). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** The next revision would no longer be an exact integer. */
  REVISION_OVERFLOW: 'REVISION_OVERFLOW',
  /** An event history skips, repeats or reorders a revision. */
  REVISION_GAP: 'REVISION_GAP',
  /** An event history contradicts itself (wrong aggregate, impossible transition, changed roster, ...). */
  INCONSISTENT_HISTORY: 'INCONSISTENT_HISTORY',
} as const;
export type DomainErrorCode = (typeof DomainErrorCode)[keyof typeof DomainErrorCode];

/**
 * Codes of the errors the other libraries raise that are not themselves on the wire: the API
 * answers each with a wire ErrorCode (apps/api/src/http/http-answers.ts), a CLI with an exit code
 * (cli-exit-codes.ts).
 */
export const LibraryErrorCode = {
  /** A match moved on since the caller read it (optimistic `WHERE revision = $n`); nothing was written. */
  STALE_MATCH_REVISION: 'STALE_MATCH_REVISION',
  /** A ticket moved on since the caller read it; nothing was written. */
  STALE_TICKET_REVISION: 'STALE_TICKET_REVISION',
  /** A backfill request moved on since the caller read it; nothing was written. */
  STALE_BACKFILL_REVISION: 'STALE_BACKFILL_REVISION',
  /** No match with that id. */
  MATCH_NOT_FOUND: 'MATCH_NOT_FOUND',
  /** A transaction kept failing on serialization failures or deadlocks, retries spent. */
  TRANSACTION_RETRIES_EXHAUSTED: 'TRANSACTION_RETRIES_EXHAUSTED',
  /** An outbox envelope failed validation: a writer's bug, never the caller's. */
  INVALID_ENVELOPE: 'INVALID_ENVELOPE',
  /** A migration rollback count that is not a positive integer, or exceeds the migrations applied. */
  INVALID_ROLLBACK: 'INVALID_ROLLBACK',
  /** A migration to roll back is unknown to this build or has no down(). */
  IRREVERSIBLE: 'IRREVERSIBLE',
  /** A migration's up() or down() failed; its transaction was rolled back. */
  MIGRATION_FAILED: 'MIGRATION_FAILED',
  /** A one-shot command could not reach PostgreSQL. */
  DATABASE_UNREACHABLE: 'DATABASE_UNREACHABLE',
  /** A command line a CLI does not accept (wrong command, flag or value). */
  USAGE: 'USAGE',
} as const;
export type LibraryErrorCode = (typeof LibraryErrorCode)[keyof typeof LibraryErrorCode];

/** Every code a CodedError may carry: the wire codes, the domain's and the other libraries'. */
export type AnyErrorCode = ErrorCode | DomainErrorCode | LibraryErrorCode;

/** Every code, for the tests that walk them and the mappings that must cover them. */
export const ALL_ERROR_CODES: readonly AnyErrorCode[] = [
  ...Object.values(ErrorCode),
  ...Object.values(DomainErrorCode),
  ...Object.values(LibraryErrorCode),
];
