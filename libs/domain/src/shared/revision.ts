import { DomainError, DomainErrorCode } from './domain.error';

export const FIRST_REVISION = 1;

/** Revisions rise by exactly one; past 2^53 - 1 a number could no longer tell two apart. */
export function nextRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision < FIRST_REVISION) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `revision must be an integer >= 1, got ${String(revision)}`,
      { revision },
    );
  }
  if (revision >= Number.MAX_SAFE_INTEGER) {
    throw new DomainError(
      DomainErrorCode.REVISION_OVERFLOW,
      `revision ${revision} has no exact successor`,
      { revision },
    );
  }
  return revision + 1;
}
