import { DomainError, DomainErrorCode } from '../shared/domain.error';
import {
  ATTRIBUTE_VALUE_MAX_LENGTH,
  isPlainObject,
  listText,
  ownValue,
  quote,
} from './attribute-values';
import {
  type AttributeDeclaration,
  type AttributeValue,
  type DistanceRule,
  type EqualRule,
  type AttributeRule,
  type IntersectRule,
  type ModeAttributeSchema,
  type NumberAttributeDeclaration,
  type SetAttributeDeclaration,
  type StringAttributeDeclaration,
  type TicketAttributes,
} from './attribute-schema';

export * from './attribute-schema';

/* A ticket's attributes checked against its mode's schema, and the rules' reading of them. */

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
    const resolved = resolveValue(declaration, value);
    if ('problem' in resolved)
      problems.push({ attribute: declaration.name, message: resolved.problem });
    else attributes[declaration.name] = resolved.value;
  }
  return problems.length > 0 ? { problems } : { attributes: Object.freeze(attributes) };
}

/** The value to store (a set in declared order), or what is wrong with the given one. */
function resolveValue(
  declaration: AttributeDeclaration,
  value: unknown,
): { value: AttributeValue } | { problem: string } {
  if (declaration.type === 'set') return resolveSet(declaration, value);
  const problem = valueProblem(declaration, value);
  return problem === undefined ? { value: value as AttributeValue } : { problem };
}

function resolveSet(
  declaration: SetAttributeDeclaration,
  value: unknown,
): { value: readonly string[] } | { problem: string } {
  const { name, values } = declaration;
  if (!Array.isArray(value)) return { problem: `${name} must be a list of values` };
  if (value.length === 0) return { problem: `${name} must list at least one value` };
  const given = new Set<string>();
  for (const element of value as unknown[]) {
    if (typeof element !== 'string' || !values.includes(element)) {
      const shown =
        typeof element === 'string'
          ? quote(element.slice(0, ATTRIBUTE_VALUE_MAX_LENGTH))
          : (JSON.stringify(element) ?? String(element));
      return {
        problem: `${name} lists ${shown.slice(0, 80)}; its values must be among ${listText(values)}`,
      };
    }
    if (given.has(element)) return { problem: `${name} lists ${quote(element)} twice` };
    given.add(element);
  }
  return { value: Object.freeze(values.filter((allowed) => given.has(allowed))) };
}

function valueProblem(
  declaration: StringAttributeDeclaration | NumberAttributeDeclaration,
  value: unknown,
): string | undefined {
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
 * Matching. Tickets queued before an attribute was declared have no value for it: on an equal or
 * intersect rule a missing value is a value of its own (such tickets meet each other), and a
 * distance rule holds between two missing values and never between a missing and a present one.
 */

/** The rules of `kind`, in their declared order. */
export function equalRules(rules: readonly AttributeRule[] | undefined): EqualRule[] {
  return (rules ?? []).filter((rule): rule is EqualRule => rule.kind === 'equal');
}

export function intersectRules(rules: readonly AttributeRule[] | undefined): IntersectRule[] {
  return (rules ?? []).filter((rule): rule is IntersectRule => rule.kind === 'intersect');
}

/** Whether `rule` still applies to a match whose anchor (its oldest ticket) has waited `waitedMs`. */
export function ruleApplies(rule: AttributeRule, waitedMs: number): boolean {
  return (
    rule.kind === 'distance' ||
    rule.optionalAfterMs === undefined ||
    waitedMs < rule.optionalAfterMs
  );
}

/** The rules that apply to a match whose anchor has waited `waitedMs` (see {@link ruleApplies}). */
export function rulesInForce(
  rules: readonly AttributeRule[] | undefined,
  waitedMs: number,
): AttributeRule[] {
  return (rules ?? []).filter((rule) => ruleApplies(rule, waitedMs));
}

/** How long until `rule` stops applying for an anchor that waited `waitedMs`; null: it never does. */
export function optionalInMs(rule: AttributeRule, waitedMs: number): number | null {
  if (rule.kind === 'distance' || rule.optionalAfterMs === undefined) return null;
  return Math.max(0, rule.optionalAfterMs - waitedMs);
}

/** The set of `name` in `attributes` (its strings), or undefined when it is not a list. */
export function setAttributeOf(attributes: unknown, name: string): readonly string[] | undefined {
  if (!isPlainObject(attributes)) return undefined;
  const value = ownValue(attributes, name);
  if (!Array.isArray(value)) return undefined;
  return (value as unknown[]).filter((element): element is string => typeof element === 'string');
}

/**
 * Whether every one of `attributeSets` shares a value of the intersect rule's set (a missing set
 * is a value of its own, shared only with other missing ones).
 */
export function setsIntersect(rule: IntersectRule, attributeSets: readonly unknown[]): boolean {
  let common: Set<string> | undefined;
  for (const attributes of attributeSets) {
    const values = setAttributeOf(attributes, rule.attribute) ?? [MISSING_SET];
    common = new Set(common === undefined ? values : values.filter((value) => common?.has(value)));
    if (common.size === 0) return false;
  }
  return true;
}

/** What a missing set reads as: not a storable value (control characters are refused). */
export const MISSING_SET = '\u0000';

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

/** One step of {@link equalRuleKeys}' tree: a rule's values, each to the next rule's. */
interface EqualKeyLevel {
  readonly next: Map<string | number | undefined, EqualKeyLevel>;
  key?: string;
}

/**
 * equalRuleKey for many tickets: each combination of values is looked up through one map per
 * rule and its key built once, so a pass over thousands of tickets makes a handful of strings
 * rather than one (and an array) per ticket.
 */
export function equalRuleKeys(rules: readonly EqualRule[]): (attributes: unknown) => string {
  if (rules.length === 0) return () => '';
  const root: EqualKeyLevel = { next: new Map() };
  return (attributes) => {
    let level = root;
    for (const rule of rules) {
      const value = attributeValueOf(attributes, rule.attribute);
      let next = level.next.get(value);
      if (!next) level.next.set(value, (next = { next: new Map() }));
      level = next;
    }
    return (level.key ??= equalRuleKey(rules, attributes));
  };
}

/** The value of `name` in `attributes` if it is a string or finite number; otherwise undefined. */
export function attributeValueOf(attributes: unknown, name: string): string | number | undefined {
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
 * Attributes read back from JSON (the candidate projection): entries that are neither a string,
 * a finite number nor a list of strings are dropped (as are a list's other elements) and anything
 * but an object reads as none, so a corrupt or older candidate never throws in a pass.
 */
export function readTicketAttributes(value: unknown): TicketAttributes {
  if (!isPlainObject(value)) return Object.freeze({});
  const attributes: Record<string, AttributeValue> = {};
  for (const name of Object.keys(value)) {
    const read = attributeValueOf(value, name) ?? setAttributeOf(value, name);
    if (read !== undefined) attributes[name] = Array.isArray(read) ? Object.freeze(read) : read;
  }
  return Object.freeze(attributes);
}

/** A numeric attribute value for distance rules: the number, or NaN when absent or not a number. */
export function numericAttribute(attributes: unknown, name: string): number {
  const value = attributeValueOf(attributes, name);
  return typeof value === 'number' ? value : Number.NaN;
}

/** Whether two tickets' attributes are the same, name by name (a set's values in order). */
export function sameTicketAttributes(a: TicketAttributes, b: TicketAttributes): boolean {
  const names = Object.keys(a);
  return (
    names.length === Object.keys(b).length &&
    names.every((name) => {
      const left = a[name];
      const right = b[name];
      if (!Array.isArray(left) || !Array.isArray(right)) return left === right;
      return left.length === right.length && left.every((value, index) => value === right[index]);
    })
  );
}

/**
 * `attributes` with each set narrowed to the values every one of `others` holds too: what a
 * running match's players have in common (the platforms a backfilled player must share).
 */
export function withCommonSets(
  attributes: TicketAttributes,
  others: readonly TicketAttributes[],
): TicketAttributes {
  const narrowed: Record<string, AttributeValue> = { ...attributes };
  for (const name of Object.keys(attributes)) {
    const values = setAttributeOf(attributes, name);
    if (values === undefined) continue;
    narrowed[name] = Object.freeze(
      values.filter((element) =>
        others.every((other) => setAttributeOf(other, name)?.includes(element) ?? true),
      ),
    );
  }
  return Object.freeze(narrowed);
}
