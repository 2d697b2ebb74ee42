/**
 * The rows a statement returned: TypeORM's postgres driver answers `[rows, affectedCount]` for
 * UPDATE/DELETE ... RETURNING and plain rows for SELECT and INSERT.
 */
export function returnedRows<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}
