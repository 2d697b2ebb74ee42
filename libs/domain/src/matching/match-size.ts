/**
 * Per-match minimum with fill steps (mode shapes, issue 34 item 1): a battle royale of up to 100
 * that starts with 80 after 30 s and with 60 after a minute. A match forms full at once, or as
 * small as the anchor's step allows once the anchor has waited that long, always in whole teams.
 */
import { type ModeRules, playersPerMatch, teamSizesOf } from './mode-rules';

export type { FillStep } from './mode-rules';
import { compareText, type RegionShortfall, type UnmatchedReason } from './unmatched-reason';

/** The fewest players a match anchored by a ticket that waited `waitedMs` may have. */
export function minPlayersAt(rules: ModeRules, waitedMs: number): number {
  let min = playersPerMatch(rules);
  for (const step of rules.fill ?? []) {
    if (step.afterMs > waitedMs) break;
    min = step.minPlayers;
  }
  return min;
}

/** How long until the next fill step lowers the minimum, or null when none is left. */
export function nextFillInMs(rules: ModeRules, waitedMs: number): number | null {
  const next = (rules.fill ?? []).find((step) => step.afterMs > waitedMs);
  return next ? next.afterMs - waitedMs : null;
}

/**
 * The team sizes a search tries, largest match first: the full match, then (with fill steps) one
 * team fewer at a time down to the minimum of the anchor's wait.
 */
export function matchShapesAt(rules: ModeRules, waitedMs: number): (readonly number[])[] {
  const full = teamSizesOf(rules);
  const shapes: (readonly number[])[] = [full];
  if (!rules.fill) return shapes;
  const fewestTeams = Math.ceil(minPlayersAt(rules, waitedMs) / rules.teamSize);
  for (let teams = rules.teamCount - 1; teams >= fewestTeams; teams--) {
    shapes.push(new Array<number>(teams).fill(rules.teamSize));
  }
  return shapes;
}

/**
 * The team sizes of a match of `players` players whose oldest participant waited `waitedMs`, or
 * null when the mode does not allow one that size then (what the proposal screen checks).
 */
export function teamSizesFor(
  rules: ModeRules,
  waitedMs: number,
  players: number,
): readonly number[] | null {
  return matchShapesAt(rules, waitedMs).find((sizes) => sum(sizes) === players) ?? null;
}

/**
 * MATCH_TOO_SMALL: in a mode with fill steps, no region has the players the ticket's current
 * minimum needs (`regions[].missing` counts towards that minimum).
 */
export function matchTooSmall(
  rules: ModeRules,
  waitedMs: number,
  shortfalls: readonly RegionShortfall[],
  nextWideningInMs: number | null,
): UnmatchedReason {
  const minPlayers = minPlayersAt(rules, waitedMs);
  const maxPlayers = playersPerMatch(rules);
  const nextFill = nextFillInMs(rules, waitedMs);
  const regions = [...shortfalls].sort(
    (a, b) => a.missing - b.missing || a.rttMs - b.rttMs || compareText(a.region, b.region),
  );
  const best = regions[0];
  const now = minPlayers === maxPlayers ? `${maxPlayers}` : `${minPlayers}-${maxPlayers}`;
  const found = best ? `; ${best.available} within your limits in ${best.region}` : '';
  const lowered = nextFill === null ? '' : `; the minimum drops in ${Math.ceil(nextFill / 1000)} s`;
  return Object.freeze({
    code: 'MATCH_TOO_SMALL',
    message: `a match of ${rules.mode} needs ${now} players now${found}${lowered}`,
    details: Object.freeze({
      minPlayers,
      maxPlayers,
      regions: Object.freeze(regions.map((r) => Object.freeze({ ...r }))),
      nextFillInMs: nextFill,
      nextWideningInMs,
    }),
  });
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
