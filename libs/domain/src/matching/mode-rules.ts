import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { isLabel } from '../shared/value.guards';
import { attributeRulesProblems, type AttributeRule } from './attribute-rules';

/**
 * The limits a ticket accepts once it has waited `afterMs`. Steps only ever widen, so a ticket's
 * limits never shrink while it waits and the oldest participant of a match has the widest ones.
 */
export interface WideningStep {
  readonly afterMs: number;
  /** Highest predicted RTT (ms, inclusive) any participant may have to the match's region. */
  readonly maxRttMs: number;
  /** Largest rating distance (inclusive) from the anchor's rating; Infinity means any rating. */
  readonly ratingWindow: number;
}

export interface ModeRules {
  readonly mode: string;
  /** Players per team; with `teamSizes`, the largest team's (the largest party a mode takes). */
  readonly teamSize: number;
  readonly teamCount: number;
  /**
   * Asymmetric teams (mode shapes, issue 34): team i has `teamSizes[i]` players (4 hunters v 1
   * monster: [4, 1]). Absent: every team has `teamSize`.
   */
  readonly teamSizes?: readonly number[];
  /**
   * Fill steps (match-size.ts): a match forms full at once, or with fewer whole teams, down to a
   * step's `minPlayers`, once its anchor has waited the step's `afterMs`. Absent: full only.
   */
  readonly fill?: readonly FillStep[];
  /** Sorted by `afterMs`, the first at 0 so every wait has a step. */
  readonly widening: readonly WideningStep[];
  /**
   * Rules over ticket attributes (attribute-rules.ts): equal values, or a numeric distance from
   * the anchor's that widens with its wait. None when absent.
   */
  readonly attributeRules?: readonly AttributeRule[];
}

/** Once the anchor has waited `afterMs`, a match of at least `minPlayers` may form. */
export interface FillStep {
  readonly afterMs: number;
  /** Whole teams: a multiple of the team size, at least two teams, fewer than a full match. */
  readonly minPlayers: number;
}

/** A sanity bound: the matcher and the roster are built for lobbies, not for whole shards. */
export const MAX_PLAYERS_PER_MATCH = 1000;

export function playersPerMatch(rules: ModeRules): number {
  return teamSizesOf(rules).reduce((total, size) => total + size, 0);
}

/** Each team's size, in team order. */
export function teamSizesOf(rules: ModeRules): readonly number[] {
  return rules.teamSizes ?? new Array<number>(rules.teamCount).fill(rules.teamSize);
}

/**
 * Throws INVALID_ARGUMENT listing every problem, so a bad rule set fails at start-up (config) or
 * at the start of a pass, never half-way through one.
 */
export function assertModeRules(rules: readonly ModeRules[]): void {
  // Typed input, checked as data: rules come from configuration files and studio code.
  const list: unknown = rules;
  if (!Array.isArray(list) || list.length === 0) {
    throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, 'mode rules must be a non-empty list');
  }
  const problems: string[] = [];
  const modes = new Set<string>();
  (list as unknown[]).forEach((element, index) => {
    const at = `rules[${index}]`;
    if (typeof element !== 'object' || element === null) {
      problems.push(`${at} must be an object`);
      return;
    }
    const rule = element as Partial<Record<keyof ModeRules, unknown>>;
    if (!isLabel(rule.mode)) problems.push(`${at}.mode must be a 1-64 character name`);
    else if (modes.has(rule.mode)) problems.push(`${at}.mode ${rule.mode} has rules twice`);
    else modes.add(rule.mode);
    if (!isPositiveInteger(rule.teamSize)) problems.push(`${at}.teamSize must be an integer >= 1`);
    if (!isPositiveInteger(rule.teamCount)) {
      problems.push(`${at}.teamCount must be an integer >= 1`);
    }
    if (
      isPositiveInteger(rule.teamSize) &&
      isPositiveInteger(rule.teamCount) &&
      rule.teamSize * rule.teamCount > MAX_PLAYERS_PER_MATCH
    ) {
      problems.push(`${at}: teamSize * teamCount must be at most ${MAX_PLAYERS_PER_MATCH}`);
    }
    problems.push(...teamSizesProblems(rule, at));
    problems.push(...fillProblems(rule, at));
    problems.push(...roleSlotsProblems(rule, at));
    problems.push(...wideningProblems(rule.widening, `${at}.widening`));
    problems.push(...attributeRulesProblems(rule.attributeRules, `${at}.attributeRules`));
  });
  if (problems.length > 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `invalid mode rules: ${problems.join('; ')}`,
      { problems },
    );
  }
}

/** Problems with a mode's fill steps, for assertModeRules. */
export function fillProblems(
  rule: Partial<Record<keyof ModeRules, unknown>>,
  at: string,
): string[] {
  if (rule.fill === undefined) return [];
  const steps: unknown = rule.fill;
  if (!Array.isArray(steps) || steps.length === 0) return [`${at}.fill must be a non-empty list`];
  if (rule.teamSizes !== undefined) return [`${at}.fill needs teams of one size (no teamSizes)`];
  const { teamSize, teamCount } = rule as { teamSize: number; teamCount: number };
  const full = teamSize * teamCount;
  const problems: string[] = [];
  let previous: FillStep | undefined;
  (steps as unknown[]).forEach((element, index) => {
    const here = `${at}.fill[${index}]`;
    const step = (typeof element === 'object' && element !== null ? element : {}) as Partial<
      Record<keyof FillStep, unknown>
    >;
    const { afterMs, minPlayers } = step;
    if (typeof afterMs !== 'number' || !Number.isFinite(afterMs) || afterMs <= 0) {
      problems.push(`${here}.afterMs must be a finite number > 0`);
      return;
    }
    if (typeof minPlayers !== 'number' || !Number.isSafeInteger(minPlayers)) {
      problems.push(`${here}.minPlayers must be an integer`);
      return;
    }
    if (minPlayers % teamSize !== 0 || minPlayers < 2 * teamSize || minPlayers >= full) {
      problems.push(
        `${here}.minPlayers must be whole teams of ${teamSize}, at least two and fewer than ${full} players`,
      );
    }
    if (previous && afterMs <= previous.afterMs) {
      problems.push(`${here}.afterMs must be greater than the step before`);
    }
    if (previous && minPlayers >= previous.minPlayers) {
      problems.push(`${here}.minPlayers must be lower than the step before`);
    }
    previous = { afterMs, minPlayers };
  });
  return problems;
}

/** A team must have room for the players its role rule asks for (attribute-types RoleRule). */
function roleSlotsProblems(rule: Partial<Record<keyof ModeRules, unknown>>, at: string): string[] {
  const list: unknown = rule.attributeRules;
  if (!Array.isArray(list) || !isPositiveInteger(rule.teamSize)) return [];
  const sizes = Array.isArray(rule.teamSizes) ? (rule.teamSizes as number[]) : [rule.teamSize];
  const smallest = Math.min(...sizes);
  return (list as { kind?: unknown; perTeam?: unknown }[]).flatMap((element, index) => {
    if (element.kind !== 'roles' || typeof element.perTeam !== 'object' || !element.perTeam)
      return [];
    const slots = Object.values(element.perTeam as Record<string, number>).reduce(
      (a, b) => a + b,
      0,
    );
    return slots > smallest
      ? [
          `${at}.attributeRules[${index}] asks for ${slots} players a team, the smallest team has ${smallest}`,
        ]
      : [];
  });
}

function teamSizesProblems(rule: Partial<Record<keyof ModeRules, unknown>>, at: string): string[] {
  if (rule.teamSizes === undefined) return [];
  const sizes: unknown = rule.teamSizes;
  if (!Array.isArray(sizes) || !sizes.every(isPositiveInteger)) {
    return [`${at}.teamSizes must be a list of integers >= 1`];
  }
  const problems: string[] = [];
  if (sizes.length !== rule.teamCount) {
    problems.push(`${at}.teamSizes must list teamCount (${String(rule.teamCount)}) sizes`);
  }
  if (Math.max(...sizes) !== rule.teamSize) {
    problems.push(`${at}.teamSize must be the largest of teamSizes`);
  }
  return problems;
}

function wideningProblems(widening: unknown, at: string): string[] {
  if (!Array.isArray(widening) || widening.length === 0) {
    return [`${at} must be a non-empty list of steps`];
  }
  const problems: string[] = [];
  let previous: WideningStep | undefined;
  (widening as unknown[]).forEach((element, index) => {
    const here = `${at}[${index}]`;
    if (typeof element !== 'object' || element === null) {
      problems.push(`${here} must be an object`);
      previous = undefined;
      return;
    }
    const step = element as Partial<Record<keyof WideningStep, unknown>>;
    const afterOk = isNonNegativeFinite(step.afterMs);
    const rttOk = isNonNegativeNumber(step.maxRttMs);
    const windowOk = isNonNegativeNumber(step.ratingWindow);
    if (!afterOk) problems.push(`${here}.afterMs must be a finite number >= 0`);
    else if (index === 0 && step.afterMs !== 0) problems.push(`${here}.afterMs must be 0`);
    if (!rttOk) problems.push(`${here}.maxRttMs must be a number >= 0`);
    if (!windowOk) problems.push(`${here}.ratingWindow must be a number >= 0`);
    if (!afterOk || !rttOk || !windowOk) {
      previous = undefined;
      return;
    }
    const current = step as WideningStep;
    if (previous) {
      if (current.afterMs <= previous.afterMs) {
        problems.push(`${here}.afterMs must be greater than the step before`);
      }
      // Fairness rests on this: the oldest participant's limits contain everyone else's.
      if (current.maxRttMs < previous.maxRttMs) {
        problems.push(`${here}.maxRttMs must not narrow the step before`);
      }
      if (current.ratingWindow < previous.ratingWindow) {
        problems.push(`${here}.ratingWindow must not narrow the step before`);
      }
    }
    previous = current;
  });
  return problems;
}

/** The step in force after waiting `waitedMs`: the last one whose `afterMs` has passed. */
export function wideningStepAt(rules: ModeRules, waitedMs: number): WideningStep {
  const steps = rules.widening;
  let chosen = steps[0];
  for (const step of steps) {
    if (step.afterMs > waitedMs) break;
    chosen = step;
  }
  if (!chosen) {
    throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, `mode ${rules.mode} has no steps`);
  }
  return chosen;
}

/** How long until the next step applies, or null when the widest step is already in force. */
export function nextWideningInMs(rules: ModeRules, waitedMs: number): number | null {
  const next = rules.widening.find((step) => step.afterMs > waitedMs);
  return next ? next.afterMs - waitedMs : null;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function isNonNegativeFinite(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Infinity is allowed for limits: it reads as "no limit" in a last step. */
function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value) && value >= 0;
}
