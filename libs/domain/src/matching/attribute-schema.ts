import {
  isPlainObject,
  MAX_ATTRIBUTES_PER_MODE,
  MAX_INTERSECT_COMBINATIONS,
  quote,
} from './attribute-values';
import type { AttributeDeclaration, AttributeRule, ModeAttributeSchema } from './attribute-types';
import { parseDeclaration } from './attribute-declarations';
import { parseRule } from './attribute-rule-config';

export {
  ATTRIBUTE_NAME_PATTERN,
  ATTRIBUTE_VALUE_MAX_LENGTH,
  MAX_ALLOWED_VALUES,
  MAX_ATTRIBUTES_PER_MODE,
  MAX_INTERSECT_COMBINATIONS,
} from './attribute-values';
export { attributeRulesProblems } from './attribute-rule-config';
export * from './attribute-types';

export const NO_ATTRIBUTES: ModeAttributeSchema = Object.freeze({
  attributes: Object.freeze([]),
  rules: Object.freeze([]),
});

/**
 * Reads one mode's declaration from configuration JSON:
 * `{"attributes": {"<name>": {"type": "string", "values": [...], "default"?: ...} |
 *                  {"type": "number", "min": n, "max": n, "integer"?: bool, "default"?: n} |
 *                  {"type": "set", "values": [...], "default"?: [...]}},
 *   "rules": [{"equal": "<name>", "optionalAfterSeconds"?: s} |
 *             {"intersect": "<name>", "optionalAfterSeconds"?: s} |
 *             {"distance": "<name>", "widening": [{"afterMs": 0, "maxDistance": n | "inf"}, ...]}]}`.
 * Every problem is named with its path under `at`; rules must name declared attributes of the
 * right type (a distance rule needs a number, an intersect rule a set, an equal rule a string or
 * number).
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
      } else {
        const problem = ruleTypeProblem(rule.value, target);
        if (problem) problems.push(`${here}: ${problem}`);
        if (rule.value.kind === 'roles' && target.type === 'set') {
          const unknown = Object.keys(rule.value.perTeam).filter((r) => !target.values.includes(r));
          if (unknown.length > 0) {
            problems.push(
              `${here}.perTeam names ${unknown.map(quote).join(', ')}, not a value of ${target.name}`,
            );
          }
        }
      }
      if (rule.value.kind === 'roles' && rules.some((other) => other.kind === 'roles')) {
        problems.push(`${here}: a mode has at most one roles rule`);
      }
      rules.push(rule.value);
    });
  }
  const combinations = rules.reduce((product, rule) => {
    const target = attributes.find((attribute) => attribute.name === rule.attribute);
    return rule.kind === 'intersect' && target?.type === 'set'
      ? product * target.values.length
      : product;
  }, 1);
  if (combinations > MAX_INTERSECT_COMBINATIONS) {
    problems.push(
      `${at}.rules: the intersect rules' sets allow ${combinations} combinations of values, at most ${MAX_INTERSECT_COMBINATIONS}`,
    );
  }
  return { schema: Object.freeze({ attributes, rules }), problems };
}

function ruleTypeProblem(rule: AttributeRule, target: AttributeDeclaration): string | undefined {
  const wanted = { distance: 'number', intersect: 'set', roles: 'set' } as const;
  if (rule.kind === 'equal') {
    return target.type === 'set'
      ? `an equal rule needs a string or number attribute, ${target.name} is a set (use intersect)`
      : undefined;
  }
  return target.type === wanted[rule.kind]
    ? undefined
    : `${article(rule.kind)} ${rule.kind} rule needs a ${wanted[rule.kind]} attribute, ${target.name} is a ${target.type}`;
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
