/**
 * The attribute rules a search checks between its anchor and each partner (issue 34 item 2):
 * `intersect` rules, and `equal` rules that become optional after a wait (an equal rule that never
 * does splits the mode into pools instead, formation-screen.ts). A set of tickets shares a value
 * of a set exactly when some one value is in every ticket's set, so the anchor's search tries each
 * value of its own set in turn (each combination, across several rules) and takes partners that
 * hold it: a "choice". Once the anchor has waited past a rule's `optionalAfterMs`, the rule drops
 * out of its choices and the match is formed regardless of it.
 */
import {
  attributeValueOf,
  MISSING_SET,
  ruleApplies,
  setAttributeOf,
  type AttributeRule,
  type EqualRule,
  type IntersectRule,
} from './attribute-rules';

export type PairRule = EqualRule | IntersectRule;

/** A value per pair rule that every member of a match must hold; null where the rule is waived. */
export type PairChoice = readonly (string | null)[];

/** Equal rules that never become optional: they split a mode into pools. */
export function partitioningEqualRules(rules: readonly AttributeRule[] | undefined): EqualRule[] {
  return (rules ?? []).filter(
    (rule): rule is EqualRule => rule.kind === 'equal' && rule.optionalAfterMs === undefined,
  );
}

/** The rules checked pair-wise in a search, in declared order. */
export function pairRules(rules: readonly AttributeRule[] | undefined): PairRule[] {
  return (rules ?? []).filter(
    (rule): rule is PairRule =>
      rule.kind === 'intersect' || (rule.kind === 'equal' && rule.optionalAfterMs !== undefined),
  );
}

/**
 * What a ticket holds for `rule`: the one key of its value for an equal rule (a missing value is a
 * value of its own), its set for an intersect rule (a missing set reads as one value of its own).
 */
export function pairValues(rule: PairRule, attributes: unknown): ReadonlySet<string> {
  if (rule.kind === 'equal') {
    return new Set([JSON.stringify(attributeValueOf(attributes, rule.attribute) ?? null)]);
  }
  const values = setAttributeOf(attributes, rule.attribute);
  return new Set(values === undefined || values.length === 0 ? [MISSING_SET] : values);
}

/**
 * The choices a search anchored by a ticket holding `values` (per pair rule) tries, after waiting
 * `waitedMs`: the product of its values over the rules still in force, in a fixed order.
 */
export function pairChoices(
  rules: readonly PairRule[],
  values: readonly ReadonlySet<string>[],
  waitedMs: number,
): PairChoice[] {
  let choices: (string | null)[][] = [[]];
  rules.forEach((rule, index) => {
    const held = ruleApplies(rule, waitedMs) ? [...(values[index] ?? [])].sort() : [null];
    choices = choices.flatMap((choice) => held.map((value) => [...choice, value]));
  });
  return choices;
}

/** Whether a partner holding `values` meets `choice`; else the index of the first rule it fails. */
export function meetsChoice(choice: PairChoice, values: readonly ReadonlySet<string>[]): number {
  for (let index = 0; index < choice.length; index++) {
    const value = choice[index];
    if (value !== null && value !== undefined && !values[index]?.has(value)) return index;
  }
  return -1;
}
