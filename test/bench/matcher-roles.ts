/**
 * bench:matcher's role mode (issue 34): teams of two, six teams at most, down to four after a
 * 20 s wait (a min/max match), one healer per team until the anchor has waited 60 s, on a pool of
 * solo players of whom some block others. Timed like the main pool, and held to two targets:
 * no blocked pair in a match, and no team short of its healer while the rule applied.
 */
import {
  formMatches,
  roleRuleAt,
  rolesOf,
  slotsOf,
  unfilledSlots,
  type MatchCandidate,
  type ModeRules,
  type ProposedMatch,
} from '@matchplane/domain';
import { bothWays, listedPairsIn } from '../../apps/matcher/src/simulation/block-lists';
import { mulberry32 as prng } from '../support/seeded-random';
import { BENCH_RULES, buildPool, timePasses } from './matcher-pure.bench';

const ROLE_RULE = {
  kind: 'roles',
  attribute: 'roles',
  perTeam: { healer: 1 },
  optionalAfterMs: 60_000,
} as const;

export const ROLE_MODE: ModeRules = {
  mode: 'brawl',
  teamSize: 2,
  teamCount: 6,
  fill: [{ afterMs: 20_000, minPlayers: 8 }],
  // The squad mode's widening and build rule: the role mode differs in its shape and roles only.
  widening: BENCH_RULES[1]!.widening,
  attributeRules: [...(BENCH_RULES[1]!.attributeRules ?? []), ROLE_RULE],
};

/** Players who can heal (some of them can also deal damage); the rest deal damage only. */
const HEALER_SHARE = 0.3;
/** Players with a block list, and how many of the pool each of them blocks. */
const BLOCKER_SHARE = 0.05;
const BLOCKS_EACH = 3;

export interface RoleModeFigures {
  readonly mode: string;
  readonly candidates: number;
  readonly pass_ms: { readonly median: number; readonly max: number };
  readonly matches: number;
  readonly matched_players: number;
  /** Matches formed below the full six teams (the fill step). */
  readonly matches_below_full: number;
  /** Players whose list (blocked or blocked by) names someone in the pool. */
  readonly players_with_blocks: number;
  /** Pairs in one match where one blocked the other; target 0. */
  readonly blocked_pairs_matched: number;
  /** Teams short of a healer in a match whose anchor's wait had not yet relaxed the rule; target 0. */
  readonly role_rule_violations: number;
}

/** The role mode's pool: the main pool's solo players, with roles and block lists. */
export function rolePool(
  size: number,
  seed: number,
  maxAgeMs: number,
  now: Date,
): MatchCandidate[] {
  const random = prng(seed ^ 0x7015);
  const base = buildPool(size, seed, maxAgeMs, now, 0);
  // Each blocker's picks; the matcher reads both directions, so each pair goes to both lists.
  const picks = base.flatMap((candidate) =>
    random() < BLOCKER_SHARE
      ? [
          {
            playerId: candidate.playerId,
            blockedPlayerIds: Array.from(
              { length: BLOCKS_EACH },
              () => base[Math.floor(random() * base.length)]!.playerId,
            ).filter((other) => other !== candidate.playerId),
          },
        ]
      : [],
  );
  const blocks = bothWays(picks, 'blockedPlayerIds');
  return base.map((candidate) => {
    const roles =
      random() < HEALER_SHARE ? (random() < 0.5 ? ['healer', 'damage'] : ['healer']) : ['damage'];
    const blocked = blocks.get(candidate.playerId);
    return {
      ...candidate,
      mode: ROLE_MODE.mode,
      attributes: { ...candidate.attributes, roles },
      ...(blocked ? { blockedPlayerIds: blocked } : {}),
    };
  });
}

export function benchRoleMode(options: {
  readonly candidates: number;
  readonly passes: number;
  readonly seed: number;
  readonly maxAgeMs: number;
}): RoleModeFigures {
  const now = new Date('2026-12-01T10:00:00.000Z');
  const pool = rolePool(options.candidates, options.seed, options.maxAgeMs, now);
  const { formation, ms } = timePasses(() => formMatches(pool, [ROLE_MODE], now), options.passes);
  const byTicket = new Map(pool.map((candidate) => [candidate.ticketId, candidate]));
  const blockLists = new Map(
    pool.flatMap((candidate) =>
      candidate.blockedPlayerIds ? [[candidate.playerId, candidate.blockedPlayerIds] as const] : [],
    ),
  );
  const full = ROLE_MODE.teamSize * ROLE_MODE.teamCount;
  return {
    mode: ROLE_MODE.mode,
    candidates: pool.length,
    pass_ms: ms,
    matches: formation.matches.length,
    matched_players: formation.matches.reduce((sum, match) => sum + match.participants.length, 0),
    matches_below_full: formation.matches.filter((match) => match.participants.length < full)
      .length,
    players_with_blocks: blockLists.size,
    blocked_pairs_matched: formation.matches.reduce(
      (sum, match) => sum + listedPairsIn(match, blockLists),
      0,
    ),
    role_rule_violations: formation.matches.reduce(
      (sum, match) => sum + teamsShortOfRoles(match, byTicket, now),
      0,
    ),
  };
}

/** Teams of `match` whose players cannot fill the role slots the anchor's wait still asked for. */
function teamsShortOfRoles(
  match: ProposedMatch,
  byTicket: ReadonlyMap<string, MatchCandidate>,
  now: Date,
): number {
  const anchor = byTicket.get(match.anchorTicketId);
  if (!anchor) throw new Error(`the anchor of a ${match.mode} match is not in the pool`);
  const rule = roleRuleAt(ROLE_MODE, now.getTime() - anchor.enqueuedAt.getTime());
  if (!rule) return 0;
  const teams = new Map<number, (readonly string[])[]>();
  for (const participant of match.participants) {
    const candidate = byTicket.get(participant.ticketId);
    if (!candidate) continue;
    const team = teams.get(participant.team) ?? [];
    team.push(rolesOf(candidate, rule));
    teams.set(participant.team, team);
  }
  return [...teams.values()].filter((players) => unfilledSlots(players, slotsOf(rule)) > 0).length;
}
