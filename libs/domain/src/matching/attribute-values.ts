/** Small checks and wordings the attribute schema and the ticket attribute checks share. */
/** Allowed string values: printable, no NUL (PostgreSQL refuses it in jsonb), at most this long. */
export const ATTRIBUTE_VALUE_MAX_LENGTH = 64;
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Own properties only: an attribute named "constructor" must not read Object's. */
export function ownValue(object: Record<string, unknown>, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined;
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function isAllowedString(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= ATTRIBUTE_VALUE_MAX_LENGTH &&
    !CONTROL_CHARACTER.test(value)
  );
}

export function quote(text: string): string {
  return JSON.stringify(text);
}

export function listText(values: readonly string[]): string {
  const shown = values.slice(0, 10).map(quote).join(', ');
  return values.length > 10 ? `${shown}, ... (${values.length} values)` : shown;
}

/** Attribute names: identifiers, so they read the same in JSON, messages and metrics. */
export const ATTRIBUTE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
export const MAX_ATTRIBUTES_PER_MODE = 16;
export const MAX_ALLOWED_VALUES = 64;
/**
 * A search tries each value of the anchor's set in turn (and each combination across several
 * intersect rules): the product of their declared value counts is bounded by this.
 */
export const MAX_INTERSECT_COMBINATIONS = 64;

/** A day: a rule optional only after longer is a rule that never relaxes for a waiting player. */
const MAX_OPTIONAL_AFTER_SECONDS = 86_400;

/** The problems of an `optionalAfterSeconds` (absent is fine). */
function optionalAfterProblems(seconds: unknown, at: string): string[] {
  return seconds === undefined ||
    (isFiniteNumber(seconds) && seconds >= 0 && seconds <= MAX_OPTIONAL_AFTER_SECONDS)
    ? []
    : [
        `${at}.optionalAfterSeconds must be a number of seconds from 0 to ${MAX_OPTIONAL_AFTER_SECONDS}`,
      ];
}

/** A problem for each field of `raw` not among `fields`, listing those. */
export function unknownFieldProblems(
  raw: Record<string, unknown>,
  fields: readonly string[],
  at: string,
): string[] {
  return Object.keys(raw)
    .filter((key) => !fields.includes(key))
    .map((key) => `${at} has unknown field ${quote(key)} (fields: ${fields.join(', ')})`);
}

/**
 * A rule that may turn optional (`optionalAfterSeconds`): the problems of its other fields with
 * that field's added, or none and the rule `fields` describe with its optionalAfterMs, frozen.
 */
export function withOptionalAfter<Rule extends { readonly optionalAfterMs?: number }>(
  raw: Record<string, unknown>,
  at: string,
  problems: string[],
  fields: () => Omit<Rule, 'optionalAfterMs'>,
): { value?: Rule; problems: string[] } {
  const seconds = raw['optionalAfterSeconds'];
  problems.push(...optionalAfterProblems(seconds, at));
  if (problems.length > 0) return { problems };
  const optionalAfter = typeof seconds === 'number' ? { optionalAfterMs: seconds * 1000 } : {};
  return { problems, value: Object.freeze({ ...fields(), ...optionalAfter }) as Rule };
}
