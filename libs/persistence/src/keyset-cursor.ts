import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/*
 * Opaque cursors for pages ordered by (instant, id), newest first. The instant is carried exactly
 * as PostgreSQL keeps it (microseconds, UTC): a JavaScript Date would round it to milliseconds
 * and a page could then repeat or skip rows that share the millisecond.
 */

const CURSOR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** SQL for `column` (a timestamptz) as a cursor instant. */
export function cursorInstantSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

export function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** The (instant, id) of a cursor this API issued; 400 INVALID_CURSOR for anything else. */
export function decodeCursor(
  cursor: string,
  isId: (id: string) => boolean,
): { at: string; id: string } {
  const bad = () =>
    new CodedError(
      ErrorCode.INVALID_CURSOR,
      'cursor is not one this API issued; start again without it',
    );
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw bad();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw bad();
  const [at, id] = decoded as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !CURSOR_INSTANT.test(at) || !isId(id))
    throw bad();
  // The pattern admits 2025-02-30; a real instant survives the round trip (milliseconds suffice to check it).
  const millis = `${at.slice(0, 23)}Z`;
  const parsed = new Date(millis);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString() !== millis) throw bad();
  return { at, id };
}

/**
 * The page of `rows` fetched with LIMIT `limit + 1` (the extra row says another page follows),
 * mapped, and the cursor after its last row (each row carries its `cursor_at`, see
 * {@link cursorInstantSql}, and `id`).
 */
export function keysetPage<Row extends { cursor_at: string; id: string }, Item>(
  rows: readonly Row[],
  limit: number,
  itemOf: (row: Row) => Item,
): { items: Item[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(itemOf),
    nextCursor: rows.length > limit && last ? encodeCursor(last.cursor_at, last.id) : null,
  };
}
