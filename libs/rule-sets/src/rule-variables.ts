import { IsOptional, Matches } from 'class-validator';
import {
  ConfigError,
  IsParsedList,
  IsQueueModeAttributes,
  loadConfig,
  parseQueueModeAttributes,
  parseQueueModes,
  QUEUE_MODES_SYNTAX,
} from '@matchplane/config';
import {
  assertModeRules,
  DomainError,
  type ModeAttributeSchema,
  type ModeRules,
  type WideningStep,
} from '@matchplane/domain';

/** The variables a rule set sets: the ones the matcher (and the API, for tickets) read rules from. */
export const RULE_VARIABLES = [
  'QUEUE_MODES',
  'MATCH_WIDENING',
  'MATCH_WIDENING_BY_MODE',
  'QUEUE_MODE_ATTRIBUTES',
] as const;
export type RuleVariable = (typeof RULE_VARIABLES)[number];
export type RuleVariables = Partial<Record<RuleVariable, string>>;

export const DEFAULT_MATCH_WIDENING = '0:50:100,10000:100:200,30000:200:400';

const STEPS = String.raw`\d{1,9}:\d{1,6}:(\d{1,9}|inf)(,\d{1,9}:\d{1,6}:(\d{1,9}|inf)){0,15}`;
const MODE_STEPS = String.raw`[a-z0-9][a-z0-9_-]{0,63}=${STEPS}`;

/** MATCH_WIDENING's syntax (that the steps only widen is {@link ruleVariableProblems}' check). */
export function IsWideningSteps(): PropertyDecorator {
  return Matches(new RegExp(`^${STEPS}$`), {
    message:
      'must be comma-separated afterMs:maxRttMs:ratingWindow steps, e.g. 0:50:100,10000:100:200',
  });
}

/** MATCH_WIDENING_BY_MODE's syntax. */
export function IsWideningByMode(): PropertyDecorator {
  return Matches(new RegExp(`^${MODE_STEPS}(;${MODE_STEPS})*$`), {
    message: 'must be ";"-separated mode=afterMs:maxRttMs:ratingWindow,... entries',
  });
}

/** "0:50:100,10000:100:inf" -> widening steps (syntax already checked). */
export function parseWideningSteps(raw: string): WideningStep[] {
  return raw.split(',').map((step) => {
    const [afterMs, maxRttMs, ratingWindow] = step.trim().split(':');
    return {
      afterMs: Number(afterMs),
      maxRttMs: Number(maxRttMs),
      ratingWindow: ratingWindow === 'inf' ? Number.POSITIVE_INFINITY : Number(ratingWindow),
    };
  });
}

/** "squad=0:60:150,20000:100:300;duel=..." -> steps per mode. */
function parseWideningByMode(raw: string | undefined): Map<string, string> {
  const byMode = new Map<string, string>();
  for (const entry of (raw ?? '').split(';').filter((item) => item.trim() !== '')) {
    const at = entry.indexOf('=');
    byMode.set(entry.slice(0, at).trim(), entry.slice(at + 1).trim());
  }
  return byMode;
}

type WellFormedRuleVariables = Pick<RuleSetVariables, RuleVariable>;

/**
 * What the rule variables, each well-formed, break together: widening steps that narrow or do not
 * start at 0, overrides of modes QUEUE_MODES does not list. Each problem starts with its variable.
 */
export function ruleVariableProblems(variables: WellFormedRuleVariables): string[] {
  const problems: string[] = [];
  const modes = new Set(parseQueueModes(variables.QUEUE_MODES).map((mode) => mode.mode));
  const overrides = parseWideningByMode(variables.MATCH_WIDENING_BY_MODE);
  for (const mode of overrides.keys()) {
    if (!modes.has(mode)) {
      problems.push(`MATCH_WIDENING_BY_MODE names mode "${mode}", which QUEUE_MODES does not list`);
    }
  }
  const check = (variable: string, steps: string) => {
    try {
      assertModeRules([
        { mode: 'check', teamSize: 1, teamCount: 2, widening: parseWideningSteps(steps) },
      ]);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const details = (error.details as { problems?: string[] } | undefined)?.problems ?? [
        error.message,
      ];
      problems.push(
        `${variable} ${details.map((p) => p.replace(/^rules\[0\]\.widening/, 'step')).join(', ')} (got "${steps}")`,
      );
    }
  };
  check('MATCH_WIDENING', variables.MATCH_WIDENING);
  for (const [mode, steps] of overrides) check(`MATCH_WIDENING_BY_MODE[${mode}]`, steps);
  return problems;
}

/**
 * Every mode's rules: team shape from QUEUE_MODES, widening from MATCH_WIDENING overridden per
 * mode by MATCH_WIDENING_BY_MODE, attribute rules from QUEUE_MODE_ATTRIBUTES.
 */
export function modeRulesOf(variables: WellFormedRuleVariables): ModeRules[] {
  const overrides = parseWideningByMode(variables.MATCH_WIDENING_BY_MODE);
  const modes = parseQueueModes(variables.QUEUE_MODES);
  const attributes = attributeSchemasOf(variables);
  const rules = modes.map(({ mode, teamSize, teamCount, teamSizes, fill }) => ({
    mode,
    teamSize,
    teamCount,
    // Only teams of different sizes name each one (hunt:4+1); equal teams stay as they were.
    ...(teamSizes.some((size) => size !== teamSize) ? { teamSizes } : {}),
    ...(fill ? { fill } : {}),
    widening: parseWideningSteps(overrides.get(mode) ?? variables.MATCH_WIDENING),
    attributeRules: attributes.get(mode)?.rules ?? [],
  }));
  assertModeRules(rules);
  return rules;
}

/** Each mode's ticket attribute declaration (QUEUE_MODE_ATTRIBUTES). */
export function attributeSchemasOf(
  variables: Pick<RuleVariables, 'QUEUE_MODES' | 'QUEUE_MODE_ATTRIBUTES'>,
): Map<string, ModeAttributeSchema> {
  const modes = parseQueueModes(variables.QUEUE_MODES ?? '').map(({ mode }) => mode);
  return parseQueueModeAttributes(variables.QUEUE_MODE_ATTRIBUTES, modes);
}

/** The rule variables as one config class: checked the way every app checks its environment. */
export class RuleSetVariables {
  static crossVariableProblems(variables: RuleSetVariables): string[] {
    return ruleVariableProblems(variables);
  }

  @IsParsedList(parseQueueModes, QUEUE_MODES_SYNTAX)
  QUEUE_MODES = '';

  @IsWideningSteps()
  MATCH_WIDENING = DEFAULT_MATCH_WIDENING;

  @IsOptional()
  @IsWideningByMode()
  MATCH_WIDENING_BY_MODE?: string = undefined;

  @IsOptional()
  @IsQueueModeAttributes()
  QUEUE_MODE_ATTRIBUTES?: string = undefined;
}

/** One problem of a rule set, with the variable (or `rules`) it is about. */
export interface RuleSetProblem {
  readonly field: string;
  readonly problem: string;
}

/**
 * A rule set's body (a JSON object of {@link RULE_VARIABLES}; QUEUE_MODE_ATTRIBUTES may be an
 * object rather than a JSON string) as variables, or the problems that make it no rule set.
 */
export function ruleVariablesFromBody(
  body: unknown,
): { variables: RuleVariables } | { problems: RuleSetProblem[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const problem = `must be a JSON object of ${RULE_VARIABLES.join(', ')}`;
    return { problems: [{ field: 'rules', problem }] };
  }
  const variables: RuleVariables = {};
  const problems: RuleSetProblem[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (!(RULE_VARIABLES as readonly string[]).includes(name)) {
      const problem = `is not a rule variable (${RULE_VARIABLES.join(', ')})`;
      problems.push({ field: name.slice(0, 64), problem });
    } else if (value !== null && value !== undefined) {
      variables[name as RuleVariable] = typeof value === 'string' ? value : JSON.stringify(value);
    }
  }
  return problems.length > 0 ? { problems } : { variables };
}

/**
 * The problems of `variables` laid over `base` (an app's own rule variables), each naming its
 * variable; none when the matcher would start with them.
 */
export function ruleSetProblems(base: RuleVariables, variables: RuleVariables): RuleSetProblem[] {
  const problems: RuleSetProblem[] = [];
  try {
    loadConfig(RuleSetVariables, { ...base, ...variables });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems.map((problem) => ({ field: fieldOf(problem), problem })));
  }
  // Each app holds a mode's leases, timeouts and scopes from its environment: those are its modes.
  const deployed = modeNames(base.QUEUE_MODES);
  const proposed = modeNames(variables.QUEUE_MODES ?? base.QUEUE_MODES);
  if (proposed !== undefined && proposed !== deployed) {
    const problem = `QUEUE_MODES must list the deployment's modes (${deployed}), each with any shape: adding or removing a mode takes a restart`;
    problems.push({ field: 'QUEUE_MODES', problem });
  }
  return problems;
}

/** The modes' names, sorted; undefined when QUEUE_MODES does not parse (loading says why). */
function modeNames(raw: string | undefined): string | undefined {
  try {
    return parseQueueModes(raw ?? '')
      .map(({ mode }) => mode)
      .sort()
      .join(', ');
  } catch {
    return undefined;
  }
}

/** The variable a problem line starts with (the longest name: MATCH_WIDENING_BY_MODE, not MATCH_WIDENING). */
function fieldOf(problem: string): string {
  const named = RULE_VARIABLES.filter((name) => problem.startsWith(name));
  return named.sort((a, b) => b.length - a.length)[0] ?? 'rules';
}
