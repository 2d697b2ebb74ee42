import { readFileSync } from 'node:fs';
import { loadConfig, parseQueueModeAttributes } from '@matchplane/config';
import type { ModeAttributeSchema, ModeRules } from '@matchplane/domain';
import { MatcherConfig } from '../matcher.config';
import { matcherRules } from '../matcher-rules';

/** The rules a simulation runs under: the matcher's, and the attribute declarations traffic needs. */
export interface SimulatedRuleSet {
  readonly rules: ModeRules[];
  readonly attributes: Map<string, ModeAttributeSchema>;
}

/** The variables a proposed rule set may set: the ones the matcher reads its rules from. */
export const RULE_VARIABLES = [
  'QUEUE_MODES',
  'MATCH_WIDENING',
  'MATCH_WIDENING_BY_MODE',
  'QUEUE_MODE_ATTRIBUTES',
] as const;

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
 * A proposed rule set: a JSON object of {@link RULE_VARIABLES} (QUEUE_MODE_ATTRIBUTES may be an
 * object rather than a JSON string) laid over `env` (an environment, or the active rule variables),
 * and checked exactly as the matcher checks its own at start-up.
 */
export function ruleSetFromFile(file: string, env: NodeJS.ProcessEnv): SimulatedRuleSet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`proposed rule set ${file}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(
      `proposed rule set ${file}: must be a JSON object of ${RULE_VARIABLES.join(', ')}`,
    );
  }
  const overrides: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (!(RULE_VARIABLES as readonly string[]).includes(name)) {
      throw new Error(
        `proposed rule set ${file}: ${name} is not a rule variable (${RULE_VARIABLES.join(', ')})`,
      );
    }
    overrides[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  // The shadow variable names this very file: a proposed set does not propose another.
  return ruleSetFromEnvironment({ ...env, MATCHER_SHADOW_RULES_FILE: undefined, ...overrides });
}
