/** One attribute's declaration read from configuration JSON (see parseModeAttributeSchema). */
import {
  ATTRIBUTE_NAME_PATTERN,
  ATTRIBUTE_VALUE_MAX_LENGTH,
  MAX_ALLOWED_VALUES,
  isAllowedString,
  isFiniteNumber,
  isPlainObject,
  quote,
} from './attribute-values';
import type { AttributeDeclaration } from './attribute-types';

export function parseDeclaration(
  name: string,
  raw: unknown,
  at: string,
): { value?: AttributeDeclaration; problems: string[] } {
  const problems: string[] = [];
  if (!ATTRIBUTE_NAME_PATTERN.test(name)) {
    problems.push(`${at}: attribute names are a letter then up to 31 letters, digits or "_"`);
  }
  if (!isPlainObject(raw)) return { problems: [...problems, `${at} must be an object`] };
  const type = raw['type'];
  const allowedFields =
    type === 'string' || type === 'set'
      ? ['type', 'values', 'default']
      : ['type', 'min', 'max', 'integer', 'default'];
  for (const key of Object.keys(raw)) {
    if (!allowedFields.includes(key)) {
      problems.push(`${at} has unknown field ${quote(key)} (fields: ${allowedFields.join(', ')})`);
    }
  }
  if (type === 'set') return parseSetDeclaration(name, raw, at, problems);
  if (type === 'string') {
    const valuesProblem = allowedValuesProblem(raw['values'], at);
    if (valuesProblem) return { problems: [...problems, valuesProblem] };
    const list = raw['values'] as string[];
    const fallback = raw['default'];
    if (fallback !== undefined && !(typeof fallback === 'string' && list.includes(fallback))) {
      problems.push(`${at}.default must be one of its values`);
    }
    return {
      problems,
      value: Object.freeze({
        name,
        type: 'string',
        values: Object.freeze([...list]),
        ...(typeof fallback === 'string' ? { default: fallback } : {}),
      }),
    };
  }
  if (type === 'number') {
    const min = raw['min'];
    const max = raw['max'];
    const integer = raw['integer'] ?? false;
    if (!isFiniteNumber(min)) problems.push(`${at}.min must be a finite number`);
    if (!isFiniteNumber(max)) problems.push(`${at}.max must be a finite number`);
    if (isFiniteNumber(min) && isFiniteNumber(max) && min > max) {
      problems.push(`${at}.min must not exceed max`);
    }
    if (typeof integer !== 'boolean') problems.push(`${at}.integer must be true or false`);
    const fallback = raw['default'];
    if (
      fallback !== undefined &&
      !(
        isFiniteNumber(fallback) &&
        isFiniteNumber(min) &&
        isFiniteNumber(max) &&
        fallback >= min &&
        fallback <= max &&
        (integer !== true || Number.isInteger(fallback))
      )
    ) {
      problems.push(`${at}.default must be a number within min and max`);
    }
    if (problems.length > 0) return { problems };
    return {
      problems,
      value: Object.freeze({
        name,
        type: 'number',
        min: min as number,
        max: max as number,
        integer: integer as boolean,
        ...(isFiniteNumber(fallback) ? { default: fallback } : {}),
      }),
    };
  }
  return { problems: [...problems, `${at}.type must be "string", "number" or "set"`] };
}

function allowedValuesProblem(values: unknown, at: string): string | undefined {
  if (
    !Array.isArray(values) ||
    values.length === 0 ||
    values.length > MAX_ALLOWED_VALUES ||
    !values.every(isAllowedString)
  ) {
    return `${at}.values must be a list of 1-${MAX_ALLOWED_VALUES} strings of 1-${ATTRIBUTE_VALUE_MAX_LENGTH} printable characters`;
  }
  return new Set(values).size === values.length ? undefined : `${at}.values lists a value twice`;
}

function parseSetDeclaration(
  name: string,
  raw: Record<string, unknown>,
  at: string,
  problems: string[],
): { value?: AttributeDeclaration; problems: string[] } {
  const values = raw['values'];
  const valuesProblem = allowedValuesProblem(values, at);
  if (valuesProblem) return { problems: [...problems, valuesProblem] };
  const list = values as string[];
  const fallback = raw['default'];
  if (
    fallback !== undefined &&
    !(
      Array.isArray(fallback) &&
      fallback.length > 0 &&
      new Set(fallback).size === fallback.length &&
      fallback.every((value) => list.includes(value as string))
    )
  ) {
    problems.push(`${at}.default must be a non-empty list of distinct values from its values`);
  }
  if (problems.length > 0) return { problems };
  return {
    problems,
    value: Object.freeze({
      name,
      type: 'set',
      values: Object.freeze([...list]),
      ...(Array.isArray(fallback)
        ? { default: Object.freeze(list.filter((value) => fallback.includes(value))) }
        : {}),
    }),
  };
}
