import { DomainError, DomainErrorCode } from './domain.error';
import { FIRST_REVISION } from './revision';
import { isValidDate } from './value.guards';

/** The fields every folded event shares; envelopes read back from the outbox fit it as they are. */
export interface HistoryEvent<E extends string, P> {
  readonly event: E;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /** A bigint as the outbox hands back an int64; it must still be an exact number here. */
  readonly revision: number | bigint;
  readonly occurredAt: Date;
  readonly playerIds: readonly string[];
  readonly payload: P;
}

export function inconsistent(message: string, details: Record<string, unknown> = {}): DomainError {
  return new DomainError(DomainErrorCode.INCONSISTENT_HISTORY, message, details);
}

/** The event's revision as a number, after checking it is exactly the one expected next. */
export function expectRevision(event: HistoryEvent<string, unknown>, expected: number): number {
  const { revision } = event;
  const exact =
    typeof revision === 'bigint'
      ? revision <= BigInt(Number.MAX_SAFE_INTEGER) && revision >= 1n
        ? Number(revision)
        : undefined
      : Number.isSafeInteger(revision) && revision >= 1
        ? revision
        : undefined;
  if (exact === undefined) {
    throw new DomainError(
      DomainErrorCode.REVISION_GAP,
      `${event.aggregateType} ${event.aggregateId}: revision ${String(revision)} is not an integer >= 1`,
      { aggregateId: event.aggregateId, revision: String(revision) },
    );
  }
  if (exact !== expected) {
    const what = exact > expected ? 'a gap' : 'a repeated or out-of-order revision';
    throw new DomainError(
      DomainErrorCode.REVISION_GAP,
      `${event.aggregateType} ${event.aggregateId}: expected revision ${expected}, got ${exact} (${what})`,
      { aggregateId: event.aggregateId, expected, actual: exact },
    );
  }
  return exact;
}

export function expectOccurredAt(event: HistoryEvent<string, unknown>): Date {
  if (!isValidDate(event.occurredAt)) {
    throw inconsistent(
      `${event.aggregateType} ${event.aggregateId} r${String(event.revision)}: occurredAt is not a valid Date`,
    );
  }
  return new Date(event.occurredAt.getTime());
}

/**
 * The checks a fold step starts with: `event` belongs to the `aggregate` folded so far (`current`,
 * none before its creation) and comes at the revision after it, with a valid occurredAt.
 */
export function expectNextEvent(
  where: string,
  event: HistoryEvent<string, unknown>,
  current: { readonly id: string; readonly revision: number } | undefined,
  aggregate: 'match' | 'ticket',
): { revision: number; occurredAt: Date } {
  if (current !== undefined && event.aggregateId !== current.id) {
    throw inconsistent(`${where}: belongs to another ${aggregate} than ${current.id}`, {
      [`${aggregate}Id`]: current.id,
    });
  }
  const expected = current === undefined ? FIRST_REVISION : current.revision + 1;
  return { revision: expectRevision(event, expected), occurredAt: expectOccurredAt(event) };
}

/** Same members, each once; the order of player_ids carries no meaning. */
export function sameIdSet(left: readonly string[], right: readonly string[]): boolean {
  const set = new Set(left);
  return (
    set.size === left.length && left.length === right.length && right.every((id) => set.has(id))
  );
}
