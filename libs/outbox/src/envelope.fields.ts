import { isUuid, isValidDate } from '@matchplane/domain';
import { describeValue, type EnvelopeProblem } from './events.schemas';
import { INT64_MAX, type Revision } from './envelope.types';

/* The checks of an envelope's own fields (revision, occurredAt, playerIds), payload aside. */

/** Who hands the revision over: only the driver (a row read back) may pass pg's int8 string. */
export type RevisionSource = 'writer' | 'driver';

/** An occurredAt outside these bounds is a null or a unit mix-up turned into a Date (new Date(0), seconds as ms). */
const EARLIEST_OCCURRED_AT = Date.UTC(2000, 0, 1);
const LATEST_OCCURRED_AT = Date.UTC(10000, 0, 1);

const DECIMAL_INT64 = /^[1-9][0-9]{0,18}$/;

/**
 * int64 >= 1, never coerced: -1 (a CTE that matched nothing), 0, 1.5, NaN and anything over int64
 * are errors. A number past 2^53 - 1 is refused too: it may already have been rounded.
 */
export function parseRevision(
  value: unknown,
  source: RevisionSource,
  problems: EnvelopeProblem[],
): Revision | undefined {
  const refuse = (message: string): undefined => {
    problems.push({ field: 'revision', message });
    return undefined;
  };
  if (typeof value === 'number') {
    if (!Number.isInteger(value))
      return refuse(`must be an integer >= 1, got ${describeValue(value)}`);
    if (value < 1) {
      return refuse(
        `must be >= 1, got ${value}${value === -1 ? ' (the sentinel of a CTE that matched nothing?)' : ''}`,
      );
    }
    if (!Number.isSafeInteger(value)) {
      return refuse(`${value} is past 2^53 - 1 and may have been rounded; pass a bigint`);
    }
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 1n) return refuse(`must be >= 1, got bigint ${value}`);
    if (value > INT64_MAX) return refuse(`bigint ${value} overflows int64`);
    return normalized(value);
  }
  if (typeof value === 'string' && source === 'driver') {
    if (!DECIMAL_INT64.test(value) || BigInt(value) > INT64_MAX) {
      return refuse(`must be a decimal int64 >= 1, got ${describeValue(value)}`);
    }
    return normalized(BigInt(value));
  }
  return refuse(
    `must be a number or bigint, got ${describeValue(value)}${typeof value === 'string' ? ' (strings are refused; only a row read back from PostgreSQL carries one)' : ''}`,
  );
}

function normalized(value: bigint): Revision {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

export function occurredAtProblems(occurredAt: unknown): EnvelopeProblem[] {
  if (!(occurredAt instanceof Date)) {
    return [{ field: 'occurredAt', message: `must be a Date, got ${describeValue(occurredAt)}` }];
  }
  if (!isValidDate(occurredAt))
    return [{ field: 'occurredAt', message: 'must be a valid Date, got Invalid Date' }];
  const at = occurredAt.getTime();
  if (at < EARLIEST_OCCURRED_AT || at >= LATEST_OCCURRED_AT) {
    return [
      {
        field: 'occurredAt',
        message: `${occurredAt.toISOString()} is outside 2000-01-01..9999-12-31 (a null or a unit mix-up made into a Date?)`,
      },
    ];
  }
  return [];
}

export function playerIdProblems(playerIds: unknown): EnvelopeProblem[] {
  if (!Array.isArray(playerIds)) {
    return [
      {
        field: 'playerIds',
        message: `must be a non-empty array of player uuids, got ${describeValue(playerIds)}`,
      },
    ];
  }
  if (playerIds.length === 0) {
    return [
      {
        field: 'playerIds',
        message: 'must name at least one player: an event nobody is told about is a writer bug',
      },
    ];
  }
  const seen = new Set<unknown>();
  return playerIds.flatMap((id: unknown, index) => {
    const field = `playerIds[${index}]`;
    if (!isUuid(id))
      return [{ field, message: `must be a canonical lowercase uuid, got ${describeValue(id)}` }];
    if (seen.has(id)) return [{ field, message: `repeats player ${id}` }];
    seen.add(id);
    return [];
  });
}
