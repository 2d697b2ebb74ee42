import { DomainError, DomainErrorCode } from '../shared/domain.error';

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
/** Allowed string values: printable, no NUL (PostgreSQL refuses it in jsonb), at most this long. */
export const ATTRIBUTE_VALUE_MAX_LENGTH = 64;
const MAX_DISTANCE_STEPS = 16;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

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
export interface AttributeProblem {
  readonly attribute: string;
  readonly message: string;
}

/**
 * A ticket's attributes as the mode declares them: every given one checked (unknown, wrong type,
 * not an allowed value, out of range), missing optional ones filled with their default, a missing
 * required one refused. Answers the attributes to store, or every problem found.
 */
export function resolveTicketAttributes(
  schema: ModeAttributeSchema,
  given: unknown,
): { attributes: TicketAttributes } | { problems: AttributeProblem[] } {
  if (given === undefined) given = {};
  if (!isPlainObject(given)) {
    return {
      problems: [{ attribute: '', message: 'attributes must be an object of name -> value' }],
    };
  }
  const problems: AttributeProblem[] = [];
  const declaredNames = schema.attributes.map((attribute) => attribute.name);
  for (const name of Object.keys(given)) {
    if (!declaredNames.includes(name)) {
      const shown = quote(name.slice(0, ATTRIBUTE_VALUE_MAX_LENGTH));
      problems.push({
        attribute: name.slice(0, ATTRIBUTE_VALUE_MAX_LENGTH),
        message:
          declaredNames.length === 0
            ? `unknown attribute ${shown}: this mode declares no attributes`
            : `unknown attribute ${shown}; this mode declares ${declaredNames.join(', ')}`,
      });
    }
  }
  const attributes: Record<string, AttributeValue> = {};
  for (const declaration of schema.attributes) {
    const value = ownValue(given, declaration.name);
    if (value === undefined) {
      if (declaration.default === undefined) {
        problems.push({ attribute: declaration.name, message: `${declaration.name} is required` });
      } else {
        attributes[declaration.name] = declaration.default;
      }
      continue;
    }
    const problem = valueProblem(declaration, value);
    if (problem) problems.push({ attribute: declaration.name, message: problem });
    else attributes[declaration.name] = value as AttributeValue;
  }
  return problems.length > 0 ? { problems } : { attributes: Object.freeze(attributes) };
}

function valueProblem(declaration: AttributeDeclaration, value: unknown): string | undefined {
  const { name } = declaration;
  if (declaration.type === 'string') {
    if (typeof value !== 'string') return `${name} must be a string`;
    if (!declaration.values.includes(value)) {
      return `${name} must be one of ${listText(declaration.values)}`;
    }
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${name} must be a number`;
  if (declaration.integer && !Number.isInteger(value)) return `${name} must be an integer`;
  if (value < declaration.min || value > declaration.max) {
    return `${name} must be between ${declaration.min} and ${declaration.max}`;
  }
  return undefined;
}

/*
 * Matching. Tickets queued before an attribute was declared have no value for it: on an equal rule
 * a missing value is a value of its own (such tickets meet each other), and a distance rule holds
 * between two missing values and never between a missing and a present one.
 */

/** The rules of `kind`, in their declared order. */
export function equalRules(rules: readonly AttributeRule[] | undefined): EqualRule[] {
  return (rules ?? []).filter((rule): rule is EqualRule => rule.kind === 'equal');
}

export function distanceRules(rules: readonly AttributeRule[] | undefined): DistanceRule[] {
  return (rules ?? []).filter((rule): rule is DistanceRule => rule.kind === 'distance');
}

/**
 * The key tickets that may meet under the equal rules share (and others do not): their values of
 * those attributes, in rule order. '' when the mode has no equal rule.
 */
export function equalRuleKey(rules: readonly EqualRule[], attributes: unknown): string {
  if (rules.length === 0) return '';
  const values = isPlainObject(attributes) ? attributes : {};
  return JSON.stringify(rules.map((rule) => attributeValueOf(values, rule.attribute) ?? null));
}

/** The value of `name` in `attributes` if it is a string or finite number; otherwise undefined. */
export function attributeValueOf(attributes: unknown, name: string): AttributeValue | undefined {
  if (!isPlainObject(attributes)) return undefined;
  const value = ownValue(attributes, name);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return undefined;
}

/** The largest distance the rule accepts once the anchor has waited `waitedMs`. */
export function maxDistanceAt(rule: DistanceRule, waitedMs: number): number {
  let chosen = rule.widening[0];
  for (const step of rule.widening) {
    if (step.afterMs > waitedMs) break;
    chosen = step;
  }
  if (!chosen) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `distance rule on ${rule.attribute} has no steps`,
    );
  }
  return chosen.maxDistance;
}

/** How long until the rule widens for a ticket that waited `waitedMs`, or null when it is at its widest. */
export function nextDistanceWideningInMs(rule: DistanceRule, waitedMs: number): number | null {
  const next = rule.widening.find((step) => step.afterMs > waitedMs);
  return next ? next.afterMs - waitedMs : null;
}

/**
 * Whether a partner's value `value` is within `maxDistance` of the anchor's `anchorValue` (NaN:
 * no value; see above). The one test formation, its explanations and the proposal screen use.
 */
export function withinAttributeDistance(
  value: number,
  anchorValue: number,
  maxDistance: number,
): boolean {
  if (Number.isNaN(value) || Number.isNaN(anchorValue)) {
    return Number.isNaN(value) && Number.isNaN(anchorValue);
  }
  return Math.abs(value - anchorValue) <= maxDistance;
}

/**
 * Attributes read back from JSON (the candidate projection): entries that are neither a string
 * nor a finite number are dropped and anything but an object reads as none, so a corrupt or older
 * candidate never throws in a pass.
 */
export function readTicketAttributes(value: unknown): TicketAttributes {
  if (!isPlainObject(value)) return Object.freeze({});
  const attributes: Record<string, AttributeValue> = {};
  for (const name of Object.keys(value)) {
    const read = attributeValueOf(value, name);
    if (read !== undefined) attributes[name] = read;
  }
  return Object.freeze(attributes);
}

/** A numeric attribute value for distance rules: the number, or NaN when absent or not a number. */
export function numericAttribute(attributes: unknown, name: string): number {
  const value = attributeValueOf(attributes, name);
  return typeof value === 'number' ? value : Number.NaN;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Own properties only: an attribute named "constructor" must not read Object's. */
function ownValue(object: Record<string, unknown>, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isAllowedString(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= ATTRIBUTE_VALUE_MAX_LENGTH &&
    !CONTROL_CHARACTER.test(value)
  );
}

function quote(text: string): string {
  return JSON.stringify(text);
}

function listText(values: readonly string[]): string {
  const shown = values.slice(0, 10).map(quote).join(', ');
  return values.length > 10 ? `${shown}, ... (${values.length} values)` : shown;
}
