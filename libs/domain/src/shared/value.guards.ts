import { DomainError, DomainErrorCode } from './domain.error';

/**
 * Canonical lowercase form only, as PostgreSQL prints a uuid and crypto.randomUUID() makes one:
 * ids are compared as strings (dedupe keys, player_ids membership), so 'A1...' and 'a1...' must
 * never both occur.
 */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const LABEL_MAX_LENGTH = 64;

/** A canonical lowercase uuid other than the nil uuid (which only ever means "unset"). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && CANONICAL_UUID.test(value) && value !== NIL_UUID;
}

/**
 * A mode or region name: 1-64 printable characters without surrounding whitespace, so "eu-west"
 * and "eu-west " can never name two regions.
 */
export function isLabel(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= LABEL_MAX_LENGTH &&
    value.trim() === value &&
    !CONTROL_CHARACTER.test(value)
  );
}

/** An instant exactly as Date#toISOString() prints it, which is how payloads carry times. */
export function isIsoInstant(value: unknown): value is string {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value)) return false;
  const parsed = new Date(value);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString() === value;
}

export function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

export function assertNow(now: Date): void {
  if (!isValidDate(now)) {
    throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, 'now must be a valid Date');
  }
}
