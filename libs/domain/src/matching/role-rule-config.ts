/** The role rule read from configuration JSON (mode shapes), and checked as data. */
import { isPlainObject, unknownFieldProblems, withOptionalAfter } from './attribute-values';
import type { RoleRule } from './attribute-types';

/** Roles a team needs, and how many of each: a team of 59 cannot need more. */
const MAX_ROLE_SLOTS = 59;

/** `{"roles": "<set attribute>", "perTeam": {"<role>": n, ...}, "optionalAfterSeconds"?: s}`. */
export function parseRoleRule(
  raw: Record<string, unknown>,
  at: string,
): { value?: RoleRule; problems: string[] } {
  const problems = unknownFieldProblems(raw, ['roles', 'perTeam', 'optionalAfterSeconds'], at);
  problems.push(...perTeamProblems(raw['perTeam'], `${at}.perTeam`));
  return withOptionalAfter<RoleRule>(raw, at, problems, () => ({
    kind: 'roles',
    attribute: raw['roles'] as string,
    perTeam: Object.freeze({ ...(raw['perTeam'] as Record<string, number>) }),
  }));
}

/** A non-empty object of role -> an integer >= 1, at most MAX_ROLE_SLOTS in all. */
export function perTeamProblems(perTeam: unknown, at: string): string[] {
  if (!isPlainObject(perTeam) || Object.keys(perTeam).length === 0) {
    return [`${at} must be an object of role -> players per team, e.g. {"healer": 1}`];
  }
  const counts = Object.entries(perTeam);
  const bad = counts.find(([, n]) => typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1);
  if (bad) return [`${at}.${bad[0]} must be an integer >= 1`];
  const total = counts.reduce((sum, [, n]) => sum + (n as number), 0);
  return total > MAX_ROLE_SLOTS
    ? [`${at} asks for ${total} players, at most ${MAX_ROLE_SLOTS}`]
    : [];
}
