/** Attribute rules read from configuration JSON, and checked as data (see parseModeAttributeSchema). */
import {
  ATTRIBUTE_NAME_PATTERN,
  isFiniteNumber,
  isPlainObject,
  unknownFieldProblems,
  withOptionalAfter,
} from './attribute-values';
import type { AttributeRule, DistanceStep, EqualRule, IntersectRule } from './attribute-types';
import { parseRoleRule, perTeamProblems } from './role-rule-config';

const MAX_DISTANCE_STEPS = 16;

export function parseRule(raw: unknown, at: string): { value?: AttributeRule; problems: string[] } {
  if (!isPlainObject(raw)) return { problems: [`${at} must be an object`] };
  for (const kind of ['equal', 'intersect'] as const) {
    if (typeof raw[kind] === 'string') return parseOptionalRule(kind, raw, at);
  }
  if (typeof raw['roles'] === 'string') return parseRoleRule(raw, at);
  if (typeof raw['distance'] === 'string') {
    const problems = unknownFieldProblems(raw, ['distance', 'widening'], at);
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
      `${at} must be {"equal": "<attribute>"}, {"intersect": "<attribute>"}, {"roles": "<set attribute>", "perTeam": {"<role>": <n>, ...}} (each with an optional "optionalAfterSeconds": <s>) or {"distance": "<attribute>", "widening": [{"afterMs": 0, "maxDistance": <n>}, ...]}`,
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
      return;
    }
    if (element['kind'] === 'roles') {
      problems.push(...perTeamProblems(element['perTeam'], `${here}.perTeam`));
    } else if (element['kind'] !== 'equal' && element['kind'] !== 'intersect') {
      problems.push(`${here}.kind must be "equal", "intersect", "roles" or "distance"`);
    }
    if (
      element['optionalAfterMs'] !== undefined &&
      !(isFiniteNumber(element['optionalAfterMs']) && element['optionalAfterMs'] >= 0)
    ) {
      problems.push(`${here}.optionalAfterMs must be a finite number >= 0 when present`);
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

/** `{"equal" | "intersect": "<attribute>", "optionalAfterSeconds"?: s}`. */
function parseOptionalRule(
  kind: 'equal' | 'intersect',
  raw: Record<string, unknown>,
  at: string,
): { value?: EqualRule | IntersectRule; problems: string[] } {
  const problems = unknownFieldProblems(raw, [kind, 'optionalAfterSeconds'], at);
  return withOptionalAfter<EqualRule | IntersectRule>(raw, at, problems, () => ({
    kind,
    attribute: raw[kind] as string,
  }));
}
