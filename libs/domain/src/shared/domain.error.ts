/**
 * Stable codes of rule violations in libs/domain. Services and transport filters switch on these,
 * never on messages; add codes, never repurpose one.
 */
export const DomainErrorCode = {
  /** The aggregate's current state has no exit to the requested state. */
  ILLEGAL_TRANSITION: 'ILLEGAL_TRANSITION',
  /** A requeue was asked for a match failure that does not allow one. */
  REQUEUE_NOT_ALLOWED: 'REQUEUE_NOT_ALLOWED',
  /** An expiry was asked for a ticket whose heartbeat is still within the timeout. */
  HEARTBEAT_NOT_EXPIRED: 'HEARTBEAT_NOT_EXPIRED',
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

export class DomainError extends Error {
  override name = 'DomainError';

  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}
