import {
  ATTRIBUTE_VALUE_MAX_LENGTH,
  isAllowedString,
  isFiniteNumber,
  isPlainObject,
  quote,
} from './attribute-values';

export { ATTRIBUTE_VALUE_MAX_LENGTH } from './attribute-values';

/*
 * Ticket attributes and the rules over them (issue 13 item 3). A mode declares which attributes a
 * ticket may carry (string from a list of allowed values, or number within a range) and rules over
 * them: `equal` (only tickets with the same value meet: build version, crossplay pool) and
 * `distance` (a numeric attribute within a distance of the anchor's that widens with the anchor's
 * wait, as its RTT ceiling and rating window do).
 */

export type AttributeValue = string | number;
/** A ticket's attributes by name; always an object (never null), every declared one present. */
export type TicketAttributes = Readonly<Record<string, AttributeValue>>;

/** Attribute names: identifiers, so they read the same in JSON, messages and metrics. */
export const ATTRIBUTE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
export const MAX_ATTRIBUTES_PER_MODE = 16;
export const MAX_ALLOWED_VALUES = 64;
const MAX_DISTANCE_STEPS = 16;
 

/** A string attribute: one of `values`. Without `default` it is required. */
export interface StringAttributeDeclaration {
  readonly name: string;
  readonly type: 'string';
  readonly values: readonly string[];
  readonly default?: string;
}

/** A numeric attribute within [min, max] (an integer when `integer`). Without `default` it is required. */
export interface NumberAttributeDeclaration {
  readonly name: string;
  readonly type: 'number';
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
  readonly default?: number;
}

export type AttributeDeclaration = StringAttributeDeclaration | NumberAttributeDeclaration;

/** Only tickets whose values of `attribute` are equal meet in a match. */
export interface EqualRule {
  readonly kind: 'equal';
  readonly attribute: string;
}

/** From `afterMs` of the anchor's wait on, partners may be at most `maxDistance` away from it. */
export interface DistanceStep {
  readonly afterMs: number;
  /** Inclusive; Infinity means any distance. */
  readonly maxDistance: number;
}

/** A numeric attribute within a distance of the anchor's value that widens with its wait. */
export interface DistanceRule {
  readonly kind: 'distance';
  readonly attribute: string;
  /** Sorted by afterMs, the first at 0; only widens. */
  readonly widening: readonly DistanceStep[];
}

export type AttributeRule = EqualRule | DistanceRule;

/** What one mode declares: its attributes and the rules over them. */
export interface ModeAttributeSchema {
  readonly attributes: readonly AttributeDeclaration[];
  readonly rules: readonly AttributeRule[];
}

export const NO_ATTRIBUTES: ModeAttributeSchema = Object.freeze({
  attributes: Object.freeze([]),
  rules: Object.freeze([]),
});

/**
 * Reads one mode's declaration from configuration JSON:
 * `{"attributes": {"<name>": {"type": "string", "values": [...], "default"?: ...} |
 *                  {"type": "number", "min": n, "max": n, "integer"?: bool, "default"?: n}},
 *   "rules": [{"equal": "<name>"} | {"distance": "<name>", "widening": [{"afterMs": 0, "maxDistance": n | "inf"}, ...]}]}`.
 * Every problem is named with its path under `at`; rules must name declared attributes of the
 * right type (a distance rule needs a number).
 */
export function parseModeAttributeSchema(
  value: unknown,
  at: string,
): { schema: ModeAttributeSchema; problems: string[] } {
  const problems: string[] = [];
  if (!isPlainObject(value)) {
    return { schema: NO_ATTRIBUTES, problems: [`${at} must be an object`] };
  }
  for (const key of Object.keys(value)) {
    if (key !== 'attributes' && key !== 'rules') {
      problems.push(`${at} has unknown field ${quote(key)} (fields: attributes, rules)`);
    }
  }
  const attributes: AttributeDeclaration[] = [];
  const declared = value['attributes'] ?? {};
  if (!isPlainObject(declared)) {
    problems.push(`${at}.attributes must be an object of name -> declaration`);
  } else {
    const names = Object.keys(declared);
    if (names.length > MAX_ATTRIBUTES_PER_MODE) {
      problems.push(
        `${at}.attributes declares ${names.length}, at most ${MAX_ATTRIBUTES_PER_MODE}`,
      );
    }
    for (const name of names) {
      const declaration = parseDeclaration(name, declared[name], `${at}.attributes.${name}`);
      problems.push(...declaration.problems);
      if (declaration.value) attributes.push(declaration.value);
    }
  }
  const rules: AttributeRule[] = [];
  const listed = value['rules'] ?? [];
  if (!Array.isArray(listed)) {
    problems.push(`${at}.rules must be a list`);
  } else {
    const seen = new Set<string>();
    (listed as unknown[]).forEach((element, index) => {
      const here = `${at}.rules[${index}]`;
      const rule = parseRule(element, here);
      problems.push(...rule.problems);
      if (!rule.value) return;
      const key = `${rule.value.kind}:${rule.value.attribute}`;
      if (seen.has(key))
        problems.push(`${here} repeats the ${rule.value.kind} rule on ${rule.value.attribute}`);
      seen.add(key);
      const target = attributes.find((attribute) => attribute.name === rule.value?.attribute);
      if (!target) {
        problems.push(
          `${here} names attribute ${quote(rule.value.attribute)}, which is not declared`,
        );
      } else if (rule.value.kind === 'distance' && target.type !== 'number') {
        problems.push(
          `${here}: a distance rule needs a number attribute, ${target.name} is a ${target.type}`,
        );
      }
      rules.push(rule.value);
    });
  }
  return { schema: Object.freeze({ attributes, rules }), problems };
}

function parseDeclaration(
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
    type === 'string'
      ? ['type', 'values', 'default']
      : ['type', 'min', 'max', 'integer', 'default'];
  for (const key of Object.keys(raw)) {
    if (!allowedFields.includes(key)) {
      problems.push(`${at} has unknown field ${quote(key)} (fields: ${allowedFields.join(', ')})`);
    }
  }
  if (type === 'string') {
    const values = raw['values'];
    if (
      !Array.isArray(values) ||
      values.length === 0 ||
      values.length > MAX_ALLOWED_VALUES ||
      !values.every(isAllowedString)
    ) {
      problems.push(
        `${at}.values must be a list of 1-${MAX_ALLOWED_VALUES} strings of 1-${ATTRIBUTE_VALUE_MAX_LENGTH} printable characters`,
      );
      return { problems };
    }
    const list = values;
    if (new Set(list).size !== list.length) problems.push(`${at}.values lists a value twice`);
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
  return { problems: [...problems, `${at}.type must be "string" or "number"`] };
}

function parseRule(raw: unknown, at: string): { value?: AttributeRule; problems: string[] } {
  if (!isPlainObject(raw)) return { problems: [`${at} must be an object`] };
  if (typeof raw['equal'] === 'string' && Object.keys(raw).length === 1) {
    return { problems: [], value: Object.freeze({ kind: 'equal', attribute: raw['equal'] }) };
  }
  if (typeof raw['distance'] === 'string') {
    const problems: string[] = [];
    for (const key of Object.keys(raw)) {
      if (key !== 'distance' && key !== 'widening') {
        problems.push(`${at} has unknown field ${quote(key)} (fields: distance, widening)`);
      }
    }
    const steps = Array.isArray(raw['widening'])
      ? (raw['widening'] as unknown[]).map((step) =>
          isPlainObject(step) && step['maxDistance'] === 'inf'
            ? { ...step, maxDistance: Number.POSITIVE_INFINITY }
            : step,
        )
      : raw['widening'];
    problems.push(...distanceStepsProblems(steps, `${at}.widening`));
    if (problems.length > 0) return { problems };
    return {
      problems,
      value: Object.freeze({
        kind: 'distance',
        attribute: raw['distance'],
        widening: Object.freeze(
          (steps as DistanceStep[]).map(({ afterMs, maxDistance }) =>
            Object.freeze({ afterMs, maxDistance }),
          ),
        ),
      }),
    };
  }
  return {
    problems: [
      `${at} must be {"equal": "<attribute>"} or {"distance": "<attribute>", "widening": [{"afterMs": 0, "maxDistance": <n>}, ...]}`,
    ],
  };
}

/** The problems of a mode's attribute rules as data (they may come from studio code). */
export function attributeRulesProblems(rules: unknown, at: string): string[] {
  if (rules === undefined) return [];
  if (!Array.isArray(rules)) return [`${at} must be a list`];
  const problems: string[] = [];
  (rules as unknown[]).forEach((element, index) => {
    const here = `${at}[${index}]`;
    if (!isPlainObject(element)) {
      problems.push(`${here} must be an object`);
      return;
    }
    if (
      typeof element['attribute'] !== 'string' ||
      !ATTRIBUTE_NAME_PATTERN.test(element['attribute'])
    ) {
      problems.push(`${here}.attribute must be an attribute name`);
    }
    if (element['kind'] === 'distance') {
      problems.push(...distanceStepsProblems(element['widening'], `${here}.widening`));
    } else if (element['kind'] !== 'equal') {
      problems.push(`${here}.kind must be "equal" or "distance"`);
    }
  });
  return problems;
}

function distanceStepsProblems(widening: unknown, at: string): string[] {
  if (!Array.isArray(widening) || widening.length === 0 || widening.length > MAX_DISTANCE_STEPS) {
    return [`${at} must be a list of 1-${MAX_DISTANCE_STEPS} steps {afterMs, maxDistance}`];
  }
  const problems: string[] = [];
  let previous: DistanceStep | undefined;
  (widening as unknown[]).forEach((element, index) => {
    const here = `${at}[${index}]`;
    const step = isPlainObject(element) ? element : {};
    const afterOk = isFiniteNumber(step['afterMs']) && step['afterMs'] >= 0;
    const distance = step['maxDistance'];
    const distanceOk = typeof distance === 'number' && !Number.isNaN(distance) && distance >= 0;
    if (!afterOk) problems.push(`${here}.afterMs must be a finite number >= 0`);
    else if (index === 0 && step['afterMs'] !== 0) problems.push(`${here}.afterMs must be 0`);
    if (!distanceOk) problems.push(`${here}.maxDistance must be a number >= 0 (or "inf")`);
    if (!afterOk || !distanceOk) {
      previous = undefined;
      return;
    }
    const current = { afterMs: step['afterMs'] as number, maxDistance: distance };
    if (previous) {
      if (current.afterMs <= previous.afterMs) {
        problems.push(`${here}.afterMs must be greater than the step before`);
      }
      // As for RTT and rating: the oldest participant's limits contain everyone else's.
      if (current.maxDistance < previous.maxDistance) {
        problems.push(`${here}.maxDistance must not narrow the step before`);
      }
    }
    previous = current;
  });
  return problems;
}

/** One problem with a ticket's attributes, naming the attribute (field path `attributes.<name>`). */
