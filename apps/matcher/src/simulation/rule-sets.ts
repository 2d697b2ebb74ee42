import { readFileSync } from 'node:fs';
import { loadConfig, parseQueueModeAttributes } from '@matchplane/config';
import type { ModeAttributeSchema, ModeRules } from '@matchplane/domain';
import { ruleVariablesFromBody, type RuleVariables } from '@matchplane/rule-sets';
import { MatcherConfig } from '../matcher.config';
import { matcherRules } from '../matcher-rules';

/** The rules a simulation runs under: the matcher's, and the attribute declarations traffic needs. */
export interface SimulatedRuleSet {
  readonly rules: ModeRules[];
  readonly attributes: Map<string, ModeAttributeSchema>;
}

/** The rule set the matcher would run with this environment (the active one). */
export function ruleSetFromEnvironment(env: NodeJS.ProcessEnv): SimulatedRuleSet {
  const config = loadConfig(MatcherConfig, env);
  const rules = matcherRules(config);
  return {
    rules,
    attributes: parseQueueModeAttributes(
      config.QUEUE_MODE_ATTRIBUTES,
      rules.map((rule) => rule.mode),
    ),
  };
}

/**
 * A proposed rule set: a JSON object of the rule variables (libs/rule-sets `ruleVariablesFromBody`,
 * as the operator API takes one) laid over `env` (an environment, or the active rule variables),
 * and checked exactly as the matcher checks its own at start-up.
 */
export function ruleSetFromFile(file: string, env: NodeJS.ProcessEnv): SimulatedRuleSet {
  return proposedRuleSet(env, proposedVariablesFromFile(file));
}

/** The rule variables a proposed rule set file overrides, checked as the operator API checks them. */
export function proposedVariablesFromFile(file: string): RuleVariables {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`proposed rule set ${file}: ${(error as Error).message}`);
  }
  const body = ruleVariablesFromBody(parsed);
  if ('problems' in body) {
    const problems = body.problems.map(({ field, problem }) => `${field} ${problem}`);
    throw new Error(`proposed rule set ${file}: ${problems.join('; ')}`);
  }
  return body.variables;
}

/** `proposal` laid over `base` (an environment, or the active version's rule variables). */
export function proposedRuleSet(
  base: NodeJS.ProcessEnv,
  proposal: RuleVariables,
): SimulatedRuleSet {
  // The shadow variable names its proposal's file: a proposed set does not propose another.
  return ruleSetFromEnvironment({ ...base, MATCHER_SHADOW_RULES_FILE: undefined, ...proposal });
}
