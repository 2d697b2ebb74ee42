/**
 * Pure matcher benchmark: how long one formMatches pass over a realistic pool takes on one core,
 * and how good its matches are next to a naive FIFO matcher on the same pool. No database, no
 * Redis: it measures the policy alone. `node dist/test/bench/matcher-pure.bench.js --help`.
 * Progress goes to stderr; the last stdout line is one JSON object with every figure.
 */
import { performance } from 'node:perf_hooks';
import {
  formMatches,
  playersPerMatch,
  wideningStepAt,
  withinRatingWindow,
  type MatchCandidate,
  type MatchFormation,
  type ModeRules,
} from '@matchplane/domain';
import { teamRatingGap } from '../../apps/matcher/src/simulation/match-figures';
import { mulberry32 as prng } from '../support/seeded-random';
import { parseFlags, usage, UsageError, type FlagSpec } from './bench.cli';
import {
  bySize,
  candidatesCurve,
  DEFAULT_CANDIDATES_CURVE,
  passGrowth,
  type PassGrowth,
} from './matcher-curve';

export const BENCH_REGIONS = ['eu-west', 'us-east', 'us-west', 'ap-southeast'] as const;
type Region = (typeof BENCH_REGIONS)[number];

/** Where players live: most of a game's population is in a few regions. */
const HOME_WEIGHTS: Readonly<Record<Region, number>> = {
  'eu-west': 0.35,
  'us-east': 0.3,
  'us-west': 0.15,
  'ap-southeast': 0.2,
};

/** Rough extra latency from one region's players to another region's servers, in ms. */
const DISTANCE_MS: Readonly<Record<Region, Readonly<Record<Region, number>>>> = {
  'eu-west': { 'eu-west': 0, 'us-east': 75, 'us-west': 140, 'ap-southeast': 160 },
  'us-east': { 'eu-west': 75, 'us-east': 0, 'us-west': 65, 'ap-southeast': 220 },
  'us-west': { 'eu-west': 140, 'us-east': 65, 'us-west': 0, 'ap-southeast': 170 },
  'ap-southeast': { 'eu-west': 160, 'us-east': 220, 'us-west': 170, 'ap-southeast': 0 },
};

/**
 * Client builds in the pool, as during a rollout: most players on the current build, some still
 * on the previous one, a few already on the next. Tickets carry one as the `buildVersion`
 * attribute, and both modes require it to be equal (no match of mixed builds: target 0).
 */
export const BENCH_BUILD_VERSIONS = ['1.4.0', '1.5.0', '1.6.0'] as const;
const BUILD_WEIGHTS = [0.25, 0.65, 0.1] as const;
const BUILD_RULES = [{ kind: 'equal', attribute: 'buildVersion' }] as const;

/** QUEUE_MODE_ATTRIBUTES for the matcher app of the end-to-end bench: the same declaration. */
export const BENCH_MODE_ATTRIBUTES = JSON.stringify({
  duel: {
    attributes: { buildVersion: { type: 'string', values: BENCH_BUILD_VERSIONS } },
    rules: [{ equal: 'buildVersion' }],
  },
  squad: {
    attributes: { buildVersion: { type: 'string', values: BENCH_BUILD_VERSIONS } },
    rules: [{ equal: 'buildVersion' }],
  },
});

/** A 1v1 and a 4v4, each widening 50 -> 100 -> 200 ms style as its wait grows. */
export const BENCH_RULES: readonly ModeRules[] = [
  {
    mode: 'duel',
    teamSize: 1,
    teamCount: 2,
    widening: [
      { afterMs: 0, maxRttMs: 50, ratingWindow: 100 },
      { afterMs: 20_000, maxRttMs: 100, ratingWindow: 200 },
      { afterMs: 60_000, maxRttMs: 200, ratingWindow: 400 },
    ],
    attributeRules: BUILD_RULES,
  },
  {
    mode: 'squad',
    teamSize: 4,
    teamCount: 2,
    widening: [
      { afterMs: 0, maxRttMs: 60, ratingWindow: 150 },
      { afterMs: 20_000, maxRttMs: 100, ratingWindow: 300 },
      { afterMs: 60_000, maxRttMs: 200, ratingWindow: 600 },
    ],
    attributeRules: BUILD_RULES,
  },
];

export interface PureMatcherBenchOptions {
  /** Pool size; 10,000 by default. */
  readonly candidates?: number;
  /** Timed passes after one warm-up pass; 7 by default. */
  readonly passes?: number;
  readonly seed?: number;
  /** Oldest ticket age, seconds; ages are spread uniformly over [0, maxAgeSeconds]. */
  readonly maxAgeSeconds?: number;
  /** Share of all players who queue in parties of 2-4 (squad only: a duel team is one player); 0.3. */
  readonly partyShare?: number;
  /** Called with progress lines (the CLI prints them to stderr). */
  readonly log?: (line: string) => void;
}

export interface QualityFigures {
  readonly matches: number;
  readonly matched_players: number;
  readonly mean_worst_rtt_ms: number;
  readonly p95_worst_rtt_ms: number;
  /** Highest minus lowest rating inside a match, averaged over matches. */
  readonly mean_rating_spread: number;
  /**
   * Matched players whose RTT to their match's region is above the ceiling of their own widening
   * step: the price a fresh player pays when an older anchor's widened limits govern the match.
   */
  readonly over_own_ceiling_pct: number;
  /** |mean rating of team 0 - mean rating of team 1|, averaged over matches. */
  readonly mean_abs_team_rating_gap: number;
}

export interface PureMatcherBenchResult {
  readonly bench: 'matcher-pure';
  readonly candidates: number;
  readonly regions: number;
  readonly modes: number;
  readonly passes: number;
  readonly seed: number;
  /** One formMatches call over the whole pool, every mode: what the matcher app runs. */
  readonly pass_ms: { readonly median: number; readonly max: number };
  readonly per_mode_pass_ms: Readonly<Record<string, { median: number; max: number }>>;
  /** Players the pool could at most seat: per mode, whole matches' worth of candidates. */
  readonly matchable_upper_bound: number;
  /** Unmatched tickets that could still anchor a match among the leftovers (should be 0). */
  readonly left_matchable: number;
  /** Proposed matches whose participants' build versions differ (must be 0). */
  readonly mixed_build_matches: number;
  /** Players in parties, and parties the pass split or matched in part (must be 0). */
  readonly party_players: number;
  readonly parties: number;
  readonly parties_split: number;
  /** The matcher's mean team rating gap, and 1 - it / the FIFO grouping's (target >= 0.4). */
  readonly mean_abs_team_rating_gap: number;
  readonly team_rating_gap_reduction: number;
  readonly matcher: QualityFigures;
  readonly fifo: QualityFigures;
  /** 1 - matcher mean worst RTT / FIFO mean worst RTT. */
  readonly worst_rtt_reduction: number;
}

/** Builds the pool, runs the passes and the FIFO baseline, and returns every figure. */
export function benchPureMatcher(options: PureMatcherBenchOptions = {}): PureMatcherBenchResult {
  const size = options.candidates ?? 10_000;
  const passes = options.passes ?? 7;
  const seed = options.seed ?? 20261201;
  const log = options.log ?? (() => undefined);
  const now = new Date('2026-12-01T10:00:00.000Z');
  const pool = buildPool(
    size,
    seed,
    (options.maxAgeSeconds ?? 120) * 1_000,
    now,
    options.partyShare ?? DEFAULT_PARTY_SHARE,
  );
  const partyPlayers = pool.filter((candidate) => candidate.party).length;
  const partyCount = new Set(pool.flatMap((candidate) => candidate.party?.id ?? [])).size;
  log(
    `pool: ${pool.length} candidates (${partyPlayers} in ${partyCount} parties), ` +
      `${BENCH_REGIONS.length} regions, ${BENCH_RULES.length} modes`,
  );

  const timed = (run: () => MatchFormation) => timePasses(run, passes);
  const whole = timed(() => formMatches(pool, BENCH_RULES, now));
  log(`pass over every mode: median ${whole.ms.median} ms, max ${whole.ms.max} ms`);
  const perMode: Record<string, { median: number; max: number }> = {};
  for (const rules of BENCH_RULES) {
    const ofMode = pool.filter((candidate) => candidate.mode === rules.mode);
    perMode[rules.mode] = timed(() => formMatches(ofMode, [rules], now)).ms;
    log(`pass over ${rules.mode} (${ofMode.length}): median ${perMode[rules.mode]?.median} ms`);
  }

  const formation = whole.formation;
  const byTicket = new Map(pool.map((candidate) => [candidate.ticketId, candidate]));
  const matcher = quality(
    formation.matches.map((match) => ({
      region: match.region,
      members: match.participants.flatMap((p) => byTicket.get(p.ticketId) ?? []),
      teams: match.participants.flatMap((p) => (byTicket.has(p.ticketId) ? [p.team] : [])),
    })),
    now,
  );
  const fifo = quality(fifoMatches(pool), now);
  const matchableUpperBound = BENCH_RULES.reduce((total, rules) => {
    const count = pool.filter((candidate) => candidate.mode === rules.mode).length;
    const perMatch = playersPerMatch(rules);
    return total + Math.floor(count / perMatch) * perMatch;
  }, 0);
  const result: PureMatcherBenchResult = {
    bench: 'matcher-pure',
    candidates: pool.length,
    regions: BENCH_REGIONS.length,
    modes: BENCH_RULES.length,
    passes,
    seed,
    pass_ms: whole.ms,
    per_mode_pass_ms: perMode,
    matchable_upper_bound: matchableUpperBound,
    left_matchable: leftMatchable(pool, formation, now),
    mixed_build_matches: mixedBuildMatches(
      formation.matches.map((match) =>
        match.participants.map((p) => byTicket.get(p.ticketId)?.attributes ?? {}),
      ),
    ),
    party_players: partyPlayers,
    parties: partyCount,
    parties_split: splitParties(pool, formation.matches),
    mean_abs_team_rating_gap: matcher.mean_abs_team_rating_gap,
    team_rating_gap_reduction: round(
      1 - matcher.mean_abs_team_rating_gap / fifo.mean_abs_team_rating_gap,
      3,
    ),
    matcher,
    fifo,
    worst_rtt_reduction: round(1 - matcher.mean_worst_rtt_ms / fifo.mean_worst_rtt_ms, 3),
  };
  log(
    `matcher: ${matcher.matched_players} players in ${matcher.matches} matches, worst RTT mean ` +
      `${matcher.mean_worst_rtt_ms} ms p95 ${matcher.p95_worst_rtt_ms} ms; FIFO: ` +
      `${fifo.matched_players} players in ${fifo.matches} matches, mean ${fifo.mean_worst_rtt_ms} ms p95 ${fifo.p95_worst_rtt_ms} ms`,
  );
  return result;
}

/** `passes` timed runs of `run` after a warm-up one (the first pays for JIT compilation). */
export function timePasses(
  run: () => MatchFormation,
  passes: number,
): { formation: MatchFormation; ms: { median: number; max: number } } {
  run();
  const times: number[] = [];
  let formation = run();
  for (let pass = 0; pass < passes; pass++) {
    const started = performance.now();
    formation = run();
    times.push(performance.now() - started);
  }
  return {
    formation,
    ms: { median: round(percentile(times, 0.5)), max: round(Math.max(...times)) },
  };
}

export interface PassCurve {
  /** Median ms of one pass over every mode, per pool size ("10000": ms). */
  readonly pass_ms_by_candidates: Readonly<Record<string, number>>;
  /** The pass's growth from the smallest to the largest size, next to n log n. */
  readonly pass_growth: PassGrowth | null;
}

/**
 * The pure pass timed at each of `sizes` (the same generator, seed and options as
 * {@link benchPureMatcher}, so a size's pool is the pool `--candidates` of that size builds).
 */
export function pureCostCurve(
  sizes: readonly number[],
  options: PureMatcherBenchOptions = {},
): PassCurve {
  const now = new Date('2026-12-01T10:00:00.000Z');
  const log = options.log ?? (() => undefined);
  const medians = new Map<number, number>();
  for (const size of sizes) {
    const pool = buildPool(
      size,
      options.seed ?? 20261201,
      (options.maxAgeSeconds ?? 120) * 1_000,
      now,
      options.partyShare ?? DEFAULT_PARTY_SHARE,
    );
    const { ms } = timePasses(() => formMatches(pool, BENCH_RULES, now), options.passes ?? 7);
    medians.set(size, ms.median);
    log(`curve: ${size} candidates: pass median ${ms.median} ms, max ${ms.max} ms`);
  }
  const growth = passGrowth(medians);
  if (growth) {
    log(
      `curve: ${growth.from_candidates} -> ${growth.to_candidates}: pass time x${growth.ms_ratio}, ` +
        `n log n x${growth.n_log_n_ratio}`,
    );
  }
  return { pass_ms_by_candidates: bySize(medians), pass_growth: growth };
}

// ---- the pool ----------------------------------------------------------------------------------

export const DEFAULT_PARTY_SHARE = 0.3;

export function buildPool(
  size: number,
  seed: number,
  maxAgeMs: number,
  now: Date,
  partyShare = DEFAULT_PARTY_SHARE,
): MatchCandidate[] {
  const random = prng(seed);
  // Builds from a stream of their own, so the rest of the pool is what it was before builds.
  const buildRandom = prng(seed ^ 0x5eed_b11d);
  const build = (): string => {
    let roll = buildRandom();
    for (const [index, weight] of BUILD_WEIGHTS.entries()) {
      roll -= weight;
      if (roll < 0) return BENCH_BUILD_VERSIONS[index] ?? '1.5.0';
    }
    return '1.5.0';
  };
  const uuid = () => {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
    // Version 4 and variant bits, so the ids look like what crypto.randomUUID() makes. Joined, not
    // concatenated: the matcher reads ids from JSON (flat strings), and a concatenated one is a
    // rope that every map of the pass would walk to hash.
    return flat([
      hex.slice(0, 8),
      '-',
      hex.slice(8, 12),
      '-4',
      hex.slice(13, 16),
      '-8',
      hex.slice(17, 20),
      '-',
      hex.slice(20),
    ]);
  };
  const weighted = (): Region => {
    let roll = random();
    for (const region of BENCH_REGIONS) {
      roll -= HOME_WEIGHTS[region];
      if (roll < 0) return region;
    }
    return 'eu-west';
  };
  const pool: MatchCandidate[] = [];
  for (let i = 0; i < size; i++) {
    const home = weighted();
    const homeRtt = 10 + Math.floor(random() * 51);
    const predictedRtt: Record<string, number> = { [home]: homeRtt };
    // Most clients probe every region; some only reached one or two before queueing.
    const coverage = random();
    const others = BENCH_REGIONS.filter((region) => region !== home);
    const measured =
      coverage < 0.1
        ? []
        : coverage < 0.25
          ? [others[Math.floor(random() * others.length)]]
          : others;
    for (const region of measured) {
      if (!region) continue;
      const spread = DISTANCE_MS[home][region] * (0.85 + 0.3 * random());
      predictedRtt[region] = Math.round(Math.min(300, Math.max(60, homeRtt + spread)));
    }
    pool.push({
      ticketId: uuid(),
      playerId: uuid(),
      mode: random() < 0.6 ? 'duel' : 'squad',
      rating: Math.round(1500 + 300 * gaussian(random)),
      predictedRtt,
      enqueuedAt: new Date(now.getTime() - Math.floor(random() * maxAgeMs)),
      attributes: { buildVersion: build() },
    });
  }
  return formParties(pool, seed, partyShare);
}

/**
 * Turns runs of squad players into parties until `share` of the whole pool is in one: 2-4 friends
 * who queue together (the leader's enqueue time and build), live near each other (each member's
 * RTT the leader's plus 0-15 ms) and keep their own ratings. From a PRNG stream of its own, so a
 * share of 0 leaves the pool exactly as it was.
 */
function formParties(pool: MatchCandidate[], seed: number, share: number): MatchCandidate[] {
  const random = prng(seed ^ 0x9a27_1e55);
  const squad = pool.flatMap((candidate, index) => (candidate.mode === 'squad' ? [index] : []));
  const wanted = Math.floor(share * pool.length);
  let inParties = 0;
  let next = 0;
  while (inParties < wanted) {
    const partySize = Math.min(2 + Math.floor(random() * 3), wanted - inParties);
    if (partySize < 2 || next + partySize > squad.length) break;
    const indexes = squad.slice(next, next + partySize);
    next += partySize;
    const leader = pool[indexes[0]!]!;
    const party = {
      id: flat([leader.ticketId.slice(0, 24), String(next).padStart(12, '0')]),
      size: partySize,
    };
    for (const index of indexes) {
      const member = pool[index]!;
      const predictedRtt: Record<string, number> = {};
      for (const [region, rtt] of Object.entries(leader.predictedRtt)) {
        predictedRtt[region] = member === leader ? rtt : rtt + Math.floor(random() * 16);
      }
      pool[index] = {
        ...member,
        predictedRtt,
        enqueuedAt: leader.enqueuedAt,
        ...(leader.attributes ? { attributes: leader.attributes } : {}),
        party,
      };
    }
    inParties += partySize;
  }
  return pool;
}

/** The parts as one flat string, as JSON.parse gives the matcher its candidates' ids. */
function flat(parts: readonly string[]): string {
  return parts.join('');
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

// ---- the baseline and the figures --------------------------------------------------------------

/**
 * The naive matcher: per mode and build (builds cannot play together, naive or not), consecutive
 * candidates in enqueue order form a group, played in the best region they all measured (lowest
 * worst RTT); a group with no common region is lost.
 */
function fifoMatches(pool: readonly MatchCandidate[]): PlayedMatch[] {
  const out: PlayedMatch[] = [];
  for (const [rules, build] of BENCH_RULES.flatMap((r) =>
    BENCH_BUILD_VERSIONS.map((b) => [r, b] as const),
  )) {
    const units = groupsInEnqueueOrder(
      pool.filter((candidate) => candidate.mode === rules.mode && buildOf(candidate) === build),
    );
    for (const { members, teams } of packInOrder(units, rules)) {
      let best: { region: Region; worst: number } | undefined;
      for (const region of BENCH_REGIONS) {
        const worst = worstRtt(members, region);
        if (worst !== undefined && (!best || worst < best.worst)) best = { region, worst };
      }
      if (best) out.push({ region: best.region, members, teams });
    }
  }
  return out;
}

/** Solo tickets, and each party's tickets together, oldest first. */
function groupsInEnqueueOrder(candidates: readonly MatchCandidate[]): MatchCandidate[][] {
  const groups = new Map<string, MatchCandidate[]>();
  for (const candidate of candidates) {
    const key = candidate.party?.id ?? candidate.ticketId;
    groups.set(key, [...(groups.get(key) ?? []), candidate]);
  }
  return [...groups.values()].sort(
    (a, b) => a[0]!.enqueuedAt.getTime() - b[0]!.enqueuedAt.getTime(),
  );
}

/**
 * FIFO's teams: each group, in enqueue order, onto the first team with room for all of it (teams
 * filled in order, no balancing); a group that fits no team of the match being filled waits for
 * the next one. Only full matches are played.
 */
function packInOrder(
  groups: readonly MatchCandidate[][],
  rules: ModeRules,
): { members: MatchCandidate[]; teams: number[] }[] {
  const out: { members: MatchCandidate[]; teams: number[] }[] = [];
  let deferred: MatchCandidate[][] = [];
  let next = 0;
  for (;;) {
    const room = Array.from({ length: rules.teamCount }, () => rules.teamSize);
    let free = rules.teamSize * rules.teamCount;
    const members: MatchCandidate[] = [];
    const teams: number[] = [];
    const stillDeferred: MatchCandidate[][] = [];
    const place = (group: MatchCandidate[]): void => {
      const team = free === 0 ? -1 : room.findIndex((left) => left >= group.length);
      if (team < 0) {
        stillDeferred.push(group);
        return;
      }
      room[team]! -= group.length;
      free -= group.length;
      for (const member of group) {
        members.push(member);
        teams.push(team);
      }
    };
    for (const group of deferred) place(group);
    while (free > 0 && next < groups.length) place(groups[next++]!);
    if (free > 0) return out;
    out.push({ members, teams });
    deferred = stillDeferred;
  }
}

interface PlayedMatch {
  readonly region: string;
  readonly members: readonly MatchCandidate[];
  /** Each member's team (same order). */
  readonly teams: readonly number[];
}

function worstRtt(members: readonly MatchCandidate[], region: string): number | undefined {
  const rtts = members.map((candidate) => candidate.predictedRtt[region]);
  return rtts.every((rtt) => rtt !== undefined) ? Math.max(...rtts) : undefined;
}

function quality(matches: readonly PlayedMatch[], now: Date): QualityFigures {
  const worst = matches.map((match) => worstRtt(match.members, match.region) ?? Number.NaN);
  const players = matches.flatMap((match) =>
    match.members.map((member) => ({ member, region: match.region })),
  );
  const overOwnCeiling = players.filter(({ member, region }) => {
    const rules = BENCH_RULES.find((r) => r.mode === member.mode);
    const waited = Math.max(0, now.getTime() - member.enqueuedAt.getTime());
    return !rules || (member.predictedRtt[region] ?? 0) > wideningStepAt(rules, waited).maxRttMs;
  }).length;
  const ratings = (match: PlayedMatch) => match.members.map((member) => member.rating);
  return {
    matches: matches.length,
    matched_players: players.length,
    mean_worst_rtt_ms: round(mean(worst)),
    p95_worst_rtt_ms: round(percentile(worst, 0.95)),
    mean_rating_spread: round(
      mean(matches.map((match) => Math.max(...ratings(match)) - Math.min(...ratings(match)))),
    ),
    over_own_ceiling_pct: round((100 * overOwnCeiling) / Math.max(1, players.length)),
    mean_abs_team_rating_gap: round(
      mean(
        matches.map((match) =>
          teamRatingGap({
            participants: match.members.map((member, index) => ({
              team: match.teams[index] ?? 0,
              rating: member.rating,
            })),
          }),
        ),
      ),
    ),
  };
}

/**
 * Parties the matches split (members on two teams or in two matches) or matched in part, by a
 * plain scan of the pool's party ids that shares nothing with the domain's party checks.
 */
export function splitParties(
  pool: readonly MatchCandidate[],
  matches: readonly { readonly participants: readonly { ticketId: string; team: number }[] }[],
): number {
  const placed = new Map<string, string>();
  matches.forEach((match, index) => {
    for (const participant of match.participants) {
      placed.set(participant.ticketId, `${index}/${participant.team}`);
    }
  });
  const seats = new Map<string, (string | undefined)[]>();
  for (const candidate of pool) {
    if (!candidate.party) continue;
    const list = seats.get(candidate.party.id) ?? [];
    list.push(placed.get(candidate.ticketId));
    seats.set(candidate.party.id, list);
  }
  let split = 0;
  for (const list of seats.values()) {
    if (list.every((seat) => seat === undefined)) continue;
    if (new Set(list).size > 1) split += 1;
  }
  return split;
}

/**
 * Unmatched tickets that could anchor a match among the unmatched under their own limits, by a
 * plain scan that shares nothing with formMatches' index. A party counts as one group (its mean
 * rating, its worst member's RTT, its size), and a group's partners must pack into whole teams
 * (first fit, largest groups first); the count is of tickets.
 */
function leftMatchable(
  pool: readonly MatchCandidate[],
  formation: MatchFormation,
  now: Date,
): number {
  const matched = new Set(
    formation.matches.flatMap((match) => match.participants.map((p) => p.ticketId)),
  );
  const groups = groupsInEnqueueOrder(pool.filter((candidate) => !matched.has(candidate.ticketId)));
  const rttOf = (group: MatchCandidate[], region: string) =>
    worstRtt(group, region) ?? Number.POSITIVE_INFINITY;
  const ratingOf = (group: MatchCandidate[]) => mean(group.map((member) => member.rating));
  let count = 0;
  for (const group of groups) {
    const anchor = group[0]!;
    const rules = BENCH_RULES.find((r) => r.mode === anchor.mode);
    if (!rules || group.length > rules.teamSize) continue;
    const step = wideningStepAt(rules, Math.max(0, now.getTime() - anchor.enqueuedAt.getTime()));
    const fillable = BENCH_REGIONS.some((region) => {
      if (rttOf(group, region) > step.maxRttMs) return false;
      const partners = groups.filter(
        (other) =>
          other !== group &&
          other[0]!.mode === anchor.mode &&
          buildOf(other[0]!) === buildOf(anchor) &&
          rttOf(other, region) <= step.maxRttMs &&
          withinRatingWindow(ratingOf(other), ratingOf(group), step.ratingWindow),
      );
      return fillsTeams([group, ...partners], rules);
    });
    if (fillable) count += group.length;
  }
  return count;
}

/** Whether groups (the first always seated) fill every team: first fit, largest first. */
function fillsTeams(groups: readonly MatchCandidate[][], rules: ModeRules): boolean {
  const room = Array.from({ length: rules.teamCount }, () => rules.teamSize);
  const [first, ...rest] = groups;
  for (const group of [first!, ...rest.sort((a, b) => b.length - a.length)]) {
    const team = room.findIndex((free) => free >= group.length);
    if (team >= 0) room[team]! -= group.length;
    else if (group === first) return false;
  }
  return room.every((free) => free === 0);
}

function buildOf(candidate: MatchCandidate): unknown {
  return candidate.attributes?.buildVersion;
}

/** Matches (each given as its participants' attributes) whose build versions are not all one. */
export function mixedBuildMatches(
  matches: readonly (readonly Readonly<Record<string, unknown>>[])[],
): number {
  return matches.filter(
    (participants) => new Set(participants.map((attributes) => attributes.buildVersion)).size > 1,
  ).length;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

// ---- command line ------------------------------------------------------------------------------

/** Pool sizes the curve accepts: what `--candidates` accepts. */
export const CURVE_LIMITS = { min: 1, max: 1_000_000 } as const;

const FLAGS: FlagSpec[] = [
  {
    name: 'candidates',
    description: 'pool size',
    int: { ...CURVE_LIMITS, default: 10_000 },
  },
  {
    name: 'candidates-curve',
    description: 'pool sizes of the cost curve (pass_ms_by_candidates), or off',
    string: { default: DEFAULT_CANDIDATES_CURVE },
  },
  {
    name: 'passes',
    description: 'timed passes (after one warm-up)',
    int: { min: 1, max: 1_000, default: 7 },
  },
  {
    name: 'seed',
    description: 'PRNG seed for the pool',
    int: { min: 0, max: 2 ** 32 - 1, default: 20261201 },
  },
  {
    name: 'max-age',
    description: 'oldest ticket age, seconds',
    int: { min: 0, max: 86_400, default: 120 },
  },
  {
    name: 'party-share',
    description: 'percent of players who queue in parties of 2-4 (squad)',
    int: { min: 0, max: 90, default: Math.round(DEFAULT_PARTY_SHARE * 100) },
  },
  { name: 'help', description: 'print this help', switch: true },
];

function main(): void {
  const command = 'node dist/test/bench/matcher-pure.bench.js';
  const summary = 'Pure matcher benchmark: pass time and match quality against a FIFO baseline.';
  let flags: ReturnType<typeof parseFlags>;
  let curve: number[];
  try {
    flags = parseFlags(process.argv.slice(2), FLAGS);
    curve = candidatesCurve(flags['candidates-curve'] as string, CURVE_LIMITS);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench:matcher: ${error.message}\n\n${usage(command, summary, FLAGS)}`);
    process.exit(2);
  }
  if (flags.help === true) {
    process.stdout.write(usage(command, summary, FLAGS));
    return;
  }
  const options: PureMatcherBenchOptions = {
    candidates: flags.candidates as number,
    passes: flags.passes as number,
    seed: flags.seed as number,
    maxAgeSeconds: flags['max-age'] as number,
    partyShare: (flags['party-share'] as number) / 100,
    log: (line) => process.stderr.write(`[bench:matcher] ${line}\n`),
  };
  const result = { ...benchPureMatcher(options), ...pureCostCurve(curve, options) };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (require.main === module) main();
