/**
 * Property tests on random pools from a seeded PRNG: every run checks the same pools, and a failing
 * seed reproduces. The checks read only the input and the output (plus a naive reference of the
 * algorithm that scans the whole pool), never the index formMatches uses.
 */
import { createMatch } from '../match/match.aggregate';
import { isLabel, isUuid } from '../shared/value.guards';
import {
  formMatches,
  type MatchCandidate,
  type MatchFormation,
  type ProposedMatch,
} from './match-formation';
import { playersPerMatch, wideningStepAt, type ModeRules, type WideningStep } from './mode-rules';
import { withinRatingWindow } from './region-bucket';
import type { UnmatchedReason } from './unmatched-reason';
import type { AttributeRule } from './attribute-rules';
import { mulberry32 } from '../../../../test/support/seeded-random';

const now = new Date('2026-12-01T10:00:00.000Z');
const REGIONS = ['ap-southeast', 'eu-west', 'us-east', 'us-west'];
const ITERATIONS = 400;

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function uuid(kind: 1 | 2, n: number): string {
  return `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

interface Scenario {
  readonly rules: ModeRules[];
  readonly candidates: MatchCandidate[];
}

const TEMPLATES: readonly Pick<ModeRules, 'mode' | 'teamSize' | 'teamCount'>[] = [
  { mode: 'duel', teamSize: 1, teamCount: 2 },
  { mode: 'squad', teamSize: 2, teamCount: 2 },
  { mode: 'trio-ffa', teamSize: 1, teamCount: 3 },
  { mode: 'solo', teamSize: 1, teamCount: 1 },
  { mode: 'team', teamSize: 3, teamCount: 2 },
];

function randomWidening(random: Random): WideningStep[] {
  const steps: WideningStep[] = [];
  let afterMs = 0;
  let maxRttMs = 20 + Math.floor(random() * 60);
  let ratingWindow = Math.floor(random() * 6) * 25;
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    steps.push({ afterMs, maxRttMs, ratingWindow });
    afterMs += 5_000 + Math.floor(random() * 25) * 1_000;
    maxRttMs += Math.floor(random() * 80);
    ratingWindow =
      i === count - 2 && random() < 0.2
        ? Number.POSITIVE_INFINITY
        : ratingWindow + Math.floor(random() * 8) * 25;
  }
  return steps;
}

function randomScenario(random: Random, maxCandidates = 60): Scenario {
  const regions = shuffled(random, REGIONS).slice(0, 1 + Math.floor(random() * REGIONS.length));
  const templates = shuffled(random, TEMPLATES).slice(0, 1 + Math.floor(random() * 3));
  const rules = templates.map((template) => ({ ...template, widening: randomWidening(random) }));
  const count = Math.floor(random() * (maxCandidates + 1));
  const candidates: MatchCandidate[] = [];
  for (let n = 1; n <= count; n++) {
    const predictedRtt: Record<string, number> = {};
    if (random() > 0.03) {
      for (const region of regions) {
        // Half-milliseconds: sums stay exact, so ties compare the same everywhere.
        if (random() < 0.55) predictedRtt[region] = Math.floor(random() * 400) / 2;
      }
    }
    const reusedPlayer = n > 1 && random() < 0.08 ? 1 + Math.floor(random() * (n - 1)) : n;
    candidates.push({
      ticketId: uuid(1, n),
      playerId: uuid(2, reusedPlayer),
      mode: random() < 0.03 ? 'chess' : pick(random, rules).mode,
      rating: random() < 0.02 ? Number.NaN : 1000 + Math.floor(random() * 40) * 25,
      predictedRtt,
      // Whole seconds, so enqueue times tie and the ticket id decides.
      enqueuedAt: new Date(now.getTime() - Math.floor(random() * 70) * 1_000),
    });
  }
  return { rules, candidates };
}

/**
 * The scenario with attribute rules on some modes (an equal rule over a build of three values, a
 * widening distance over a skill) and attributes on the candidates, some of them missing.
 */
function withAttributes(random: Random, scenario: Scenario): Scenario {
  const rules = scenario.rules.map((rule): ModeRules => {
    const attributeRules: AttributeRule[] = [];
    if (random() < 0.7) attributeRules.push({ kind: 'equal', attribute: 'build' });
    if (random() < 0.7) {
      const first = Math.floor(random() * 4);
      attributeRules.push({
        kind: 'distance',
        attribute: 'skill',
        widening: [
          { afterMs: 0, maxDistance: first },
          {
            afterMs: 5_000 + Math.floor(random() * 40) * 1_000,
            maxDistance: first + 1 + Math.floor(random() * 8),
          },
        ],
      });
    }
    return { ...rule, attributeRules };
  });
  const candidates = scenario.candidates.map((candidate) => {
    const attributes: Record<string, string | number> = {};
    if (random() > 0.05) attributes['build'] = pick(random, ['1.4', '1.5', '1.6']);
    if (random() > 0.05) attributes['skill'] = Math.floor(random() * 20);
    return { ...candidate, attributes };
  });
  return { rules, candidates };
}

// ---- reading the input, independently of the implementation ----

function rttOf(candidate: MatchCandidate, region: string): number | undefined {
  const value: unknown = (candidate.predictedRtt as Record<string, unknown> | null)?.[region];
  return isLabel(region) && typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? value
    : undefined;
}

function regionsOf(candidate: MatchCandidate): string[] {
  const map = candidate.predictedRtt as Record<string, unknown> | null;
  return Object.keys(map ?? {})
    .filter((region) => rttOf(candidate, region) !== undefined)
    .sort();
}

function older(a: MatchCandidate, b: MatchCandidate): boolean {
  const difference = a.enqueuedAt.getTime() - b.enqueuedAt.getTime();
  return difference < 0 || (difference === 0 && a.ticketId < b.ticketId);
}

function byAge(a: MatchCandidate, b: MatchCandidate): number {
  return older(a, b) ? -1 : older(b, a) ? 1 : 0;
}

function stepOf(rules: ModeRules, candidate: MatchCandidate): WideningStep {
  return wideningStepAt(rules, Math.max(0, now.getTime() - candidate.enqueuedAt.getTime()));
}

/** The tickets that may be matched: usable data, known mode, a region, the player's oldest there. */
function matchablePool(scenario: Scenario): MatchCandidate[] {
  const modes = new Set(scenario.rules.map((rule) => rule.mode));
  const usable = scenario.candidates
    .filter(
      (c) =>
        isUuid(c.ticketId) &&
        isUuid(c.playerId) &&
        Number.isFinite(c.rating) &&
        modes.has(c.mode) &&
        regionsOf(c).length > 0,
    )
    .sort(byAge);
  const seen = new Set<string>();
  return usable.filter((c) => {
    const key = `${c.mode}/${c.playerId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function rulesOf(scenario: Scenario, mode: string): ModeRules {
  const rules = scenario.rules.find((rule) => rule.mode === mode);
  if (!rules) throw new Error(`no rules for ${mode}`);
  return rules;
}

function cost(members: readonly MatchCandidate[], region: string) {
  let worst = 0;
  let sum = 0;
  for (const member of [...members].sort(byAge)) {
    const rtt = rttOf(member, region);
    if (rtt === undefined) return null;
    worst = Math.max(worst, rtt);
    sum += rtt;
  }
  return { worst, sum };
}

/** The best region for `members` among those all of them measured: worst, then sum, then name. */
function bestRegion(members: readonly MatchCandidate[]): string | undefined {
  const regions = [...new Set(members.flatMap(regionsOf))].sort();
  let best: { region: string; worst: number; sum: number } | undefined;
  for (const region of regions) {
    const c = cost(members, region);
    if (c && (!best || c.worst < best.worst || (c.worst === best.worst && c.sum < best.sum))) {
      best = { region, ...c };
    }
  }
  return best?.region;
}

/**
 * Whether `c` may join `anchor` under the mode's attribute rules, read from the documentation:
 * equal values (a missing value equals only a missing one), and numbers within the distance of
 * the anchor's wait (a missing value is within only of a missing one).
 */
function attributesAllow(
  rules: readonly AttributeRule[] | undefined,
  anchor: MatchCandidate,
  c: MatchCandidate,
): boolean {
  for (const rule of rules ?? []) {
    const a = anchor.attributes?.[rule.attribute];
    const b = c.attributes?.[rule.attribute];
    if (rule.kind !== 'distance' || a === undefined || b === undefined) {
      if (a !== b) return false;
      continue;
    }
    const waited = Math.max(0, now.getTime() - anchor.enqueuedAt.getTime());
    const inForce = rule.widening.filter((step) => step.afterMs <= waited).at(-1);
    if (Math.abs(Number(a) - Number(b)) > (inForce?.maxDistance ?? 0)) return false;
  }
  return true;
}

/** Tickets `anchor` could take under its own limits in `region` from `free`, oldest first. */
function eligible(
  free: readonly MatchCandidate[],
  anchor: MatchCandidate,
  step: WideningStep,
  region: string,
  attributeRules?: readonly AttributeRule[],
): MatchCandidate[] {
  return free
    .filter(
      (c) =>
        c !== anchor &&
        c.mode === anchor.mode &&
        c.playerId !== anchor.playerId &&
        (rttOf(c, region) ?? Number.POSITIVE_INFINITY) <= step.maxRttMs &&
        withinRatingWindow(c.rating, anchor.rating, step.ratingWindow) &&
        attributesAllow(attributeRules, anchor, c),
    )
    .sort(byAge);
}

/** The algorithm as documented, by whole-pool scans: the oracle for the indexed implementation. */
function referenceMatches(scenario: Scenario): string[] {
  const pool = matchablePool(scenario);
  const usedPlayers = new Set<string>();
  const out: string[] = [];
  for (const anchor of pool) {
    if (usedPlayers.has(anchor.playerId)) continue;
    const rules = rulesOf(scenario, anchor.mode);
    const step = stepOf(rules, anchor);
    const free = pool.filter((c) => !usedPlayers.has(c.playerId));
    let chosen: { region: string; members: MatchCandidate[]; worst: number; sum: number } | null =
      null;
    for (const region of regionsOf(anchor)) {
      if ((rttOf(anchor, region) ?? Number.POSITIVE_INFINITY) > step.maxRttMs) continue;
      const partners = eligible(free, anchor, step, region, rules.attributeRules).slice(
        0,
        playersPerMatch(rules) - 1,
      );
      if (partners.length < playersPerMatch(rules) - 1) continue;
      const members = [anchor, ...partners];
      const c = cost(members, region);
      if (!c || bestRegion(members) !== region) continue;
      if (
        !chosen ||
        c.worst < chosen.worst ||
        (c.worst === chosen.worst &&
          (c.sum < chosen.sum || (c.sum === chosen.sum && region < chosen.region)))
      ) {
        chosen = { region, members, ...c };
      }
    }
    if (!chosen) continue;
    for (const member of chosen.members) usedPlayers.add(member.playerId);
    out.push(
      `${anchor.mode}@${chosen.region}<${anchor.ticketId}>:${chosen.members
        .map((m) => m.ticketId)
        .sort()
        .join(',')}`,
    );
  }
  return out;
}

function describeMatches(matches: readonly ProposedMatch[]): string[] {
  return matches.map(
    (m) =>
      `${m.mode}@${m.region}<${m.anchorTicketId}>:${m.participants
        .map((p) => p.ticketId)
        .sort()
        .join(',')}`,
  );
}

// ---- the properties ----

function checkFormation(scenario: Scenario, formation: MatchFormation): void {
  const byTicket = new Map(scenario.candidates.map((c) => [c.ticketId, c]));
  const ticket = (id: string): MatchCandidate => {
    const candidate = byTicket.get(id);
    if (!candidate) throw new Error(`unknown ticket ${id}`);
    return candidate;
  };
  const pool = matchablePool(scenario);
  const inPool = new Set(pool);

  // Every candidate is accounted for exactly once.
  const reported = [
    ...formation.matches.flatMap((m) => m.participants.map((p) => p.ticketId)),
    ...formation.unmatched.map((u) => u.ticketId),
  ];
  expect([...reported].sort()).toEqual(scenario.candidates.map((c) => c.ticketId).sort());

  // No player twice across the whole pass.
  const players = formation.matches.flatMap((m) => m.participants.map((p) => p.playerId));
  expect(new Set(players).size).toBe(players.length);
  const matchedPlayers = new Set(players);
  const matchedTickets = new Set(
    formation.matches.flatMap((m) => m.participants.map((p) => ticket(p.ticketId))),
  );

  const usedBefore = new Set<string>();
  let previousAnchor: MatchCandidate | undefined;
  for (const match of formation.matches) {
    const rules = rulesOf(scenario, match.mode);
    const members = match.participants.map((p) => ticket(p.ticketId));
    const anchor = ticket(match.anchorTicketId);
    const step = stepOf(rules, anchor);
    expect(members).toContain(anchor);
    for (const member of members) {
      expect(inPool.has(member)).toBe(true);
      expect(member.mode).toBe(match.mode);
    }

    // Team sizes exact; teams balanced within the spread of the match's ratings.
    expect(members).toHaveLength(playersPerMatch(rules));
    const sums: number[] = [];
    for (let team = 0; team < rules.teamCount; team++) {
      const ofTeam = match.participants.filter((p) => p.team === team);
      expect(ofTeam).toHaveLength(rules.teamSize);
      sums.push(ofTeam.reduce((sum, p) => sum + p.rating, 0));
    }
    const ratings = members.map((m) => m.rating);
    expect(Math.max(...sums) - Math.min(...sums)).toBeLessThanOrEqual(
      Math.max(...ratings) - Math.min(...ratings),
    );

    // The region is measured by everyone, within the ceiling in force (the anchor's step), and
    // everyone's rating is within the anchor's window.
    expect({ maxRttMs: match.maxRttMs, ratingWindow: match.ratingWindow }).toEqual({
      maxRttMs: step.maxRttMs,
      ratingWindow: step.ratingWindow,
    });
    for (const participant of match.participants) {
      const member = ticket(participant.ticketId);
      expect(participant.playerId).toBe(member.playerId);
      expect(participant.rating).toBe(member.rating);
      expect(participant.rttMs).toBe(rttOf(member, match.region));
      expect(participant.rttMs).toBeLessThanOrEqual(match.maxRttMs);
      expect(withinRatingWindow(member.rating, anchor.rating, match.ratingWindow)).toBe(true);
    }
    expect(cost(members, match.region)).toEqual({
      worst: match.worstRttMs,
      sum: match.sumRttMs,
    });

    // Minimax: no region that every participant measured beats the chosen one.
    expect(bestRegion(members)).toBe(match.region);

    // Oldest first within the region: a ticket left out, unmatched at the time, eligible in this
    // region under these limits, is younger than every participant but the anchor.
    const free = pool.filter((c) => !usedBefore.has(c.playerId));
    const others = members.filter((m) => m !== anchor);
    const memberPlayers = new Set(members.map((m) => m.playerId));
    for (const leftOut of eligible(free, anchor, step, match.region, rules.attributeRules)) {
      if (memberPlayers.has(leftOut.playerId)) continue;
      for (const other of others) expect(older(leftOut, other)).toBe(false);
    }

    // Anchors take their turn oldest first.
    if (previousAnchor) expect(older(anchor, previousAnchor)).toBe(false);
    previousAnchor = anchor;
    for (const member of members) usedBefore.add(member.playerId);

    expect(() =>
      createMatch(
        {
          id: uuid(1, 0xffff),
          mode: match.mode,
          region: match.region,
          participants: match.participants,
        },
        now,
      ),
    ).not.toThrow();
  }

  // Every reason is the true one, and nobody is left matchable.
  const free = pool.filter((c) => !matchedPlayers.has(c.playerId));
  for (const { ticketId, reason } of formation.unmatched) {
    checkReason(scenario, pool, free, matchedPlayers, ticket(ticketId), reason);
  }
  expect(formation.unmatched.map((u) => u.ticketId)).toEqual(
    scenario.candidates
      .filter((c) => !matchedTickets.has(c))
      .sort((a, b) => {
        const ta = Number.isNaN(a.enqueuedAt.getTime()) ? Infinity : a.enqueuedAt.getTime();
        const tb = Number.isNaN(b.enqueuedAt.getTime()) ? Infinity : b.enqueuedAt.getTime();
        return ta - tb || (a.ticketId < b.ticketId ? -1 : 1);
      })
      .map((c) => c.ticketId),
  );
}

function checkReason(
  scenario: Scenario,
  pool: readonly MatchCandidate[],
  free: readonly MatchCandidate[],
  matchedPlayers: ReadonlySet<string>,
  candidate: MatchCandidate,
  reason: UnmatchedReason,
): void {
  const modes = new Set(scenario.rules.map((rule) => rule.mode));
  if (!Number.isFinite(candidate.rating)) {
    expect(reason.code).toBe('INVALID_CANDIDATE');
    return;
  }
  if (!modes.has(candidate.mode)) {
    expect(reason.code).toBe('UNKNOWN_MODE');
    return;
  }
  if (regionsOf(candidate).length === 0) {
    expect(reason.code).toBe('NO_REGION');
    return;
  }
  if (!pool.includes(candidate)) {
    const olderTicket = pool.find(
      (c) => c.mode === candidate.mode && c.playerId === candidate.playerId,
    );
    expect(reason).toMatchObject({
      code: 'DUPLICATE_TICKET',
      details: { olderTicketId: olderTicket?.ticketId },
    });
    return;
  }
  if (matchedPlayers.has(candidate.playerId)) {
    expect(reason.code).toBe('PLAYER_MATCHED');
    return;
  }
  const rules = rulesOf(scenario, candidate.mode);
  const step = stepOf(rules, candidate);
  const usable = regionsOf(candidate).filter(
    (region) => (rttOf(candidate, region) ?? Number.POSITIVE_INFINITY) <= step.maxRttMs,
  );
  if (usable.length === 0) {
    const nearest = [...regionsOf(candidate)].sort(
      (a, b) => (rttOf(candidate, a) ?? 0) - (rttOf(candidate, b) ?? 0) || (a < b ? -1 : 1),
    )[0];
    expect(reason).toMatchObject({
      code: 'NO_REGION_WITHIN_LIMIT',
      details: { maxRttMs: step.maxRttMs, nearestRegion: nearest },
    });
    return;
  }
  const needed = playersPerMatch(rules);
  const shortfalls = usable.map((region) => {
    // Nobody left matchable: this ticket could not anchor a match among the tickets left over.
    const available = 1 + eligible(free, candidate, step, region).length;
    expect(available).toBeLessThan(needed);
    return { region, rttMs: rttOf(candidate, region), available, missing: needed - available };
  });
  expect(reason.code).toBe('NOT_ENOUGH_PLAYERS');
  if (reason.code !== 'NOT_ENOUGH_PLAYERS') return;
  expect([...reason.details.regions].sort((a, b) => (a.region < b.region ? -1 : 1))).toEqual(
    shortfalls,
  );
  const best = reason.details.regions[0];
  expect(best?.missing).toBe(Math.min(...shortfalls.map((s) => s.missing)));
  if (usable.length === 1) {
    expect(reason.message).toMatch(new RegExp(`^waiting for ${best?.missing} more players? in `));
  } else {
    expect(reason.message).toMatch(/^no region in common (within \d+ ms )?with enough players/);
  }
}

describe(`${formMatches.name} on random pools`, () => {
  it(`keeps every guarantee on ${ITERATIONS} pools`, () => {
    const random = mulberry32(20261201);
    let matched = 0;
    let unmatched = 0;
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const scenario = randomScenario(random);
      const formation = formMatches(scenario.candidates, scenario.rules, now);
      checkFormation(scenario, formation);
      matched += formation.matches.length;
      unmatched += formation.unmatched.length;
    }
    // The pools exercise both outcomes in earnest.
    expect(matched).toBeGreaterThan(1000);
    expect(unmatched).toBeGreaterThan(1000);
  });

  it('forms exactly the matches a whole-pool scan of the documented algorithm forms', () => {
    const random = mulberry32(42);
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const scenario = randomScenario(random, iteration % 20 === 0 ? 400 : 60);
      expect(
        describeMatches(formMatches(scenario.candidates, scenario.rules, now).matches),
      ).toEqual(referenceMatches(scenario));
    }
  });

  it('with attribute rules: forms exactly the matches a whole-pool scan forms, none breaking a rule', () => {
    const random = mulberry32(1313);
    let matched = 0;
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const scenario = withAttributes(
        random,
        randomScenario(random, iteration % 20 === 0 ? 400 : 60),
      );
      const formation = formMatches(scenario.candidates, scenario.rules, now);
      expect(describeMatches(formation.matches)).toEqual(referenceMatches(scenario));
      const byTicket = new Map(scenario.candidates.map((c) => [c.ticketId, c]));
      for (const match of formation.matches) {
        const rules = rulesOf(scenario, match.mode);
        const anchor = byTicket.get(match.anchorTicketId)!;
        for (const participant of match.participants) {
          const member = byTicket.get(participant.ticketId)!;
          expect(attributesAllow(rules.attributeRules, anchor, member)).toBe(true);
        }
      }
      matched += formation.matches.length;
      // Shuffled input, same result.
      expect(formMatches(shuffled(random, scenario.candidates), scenario.rules, now)).toEqual(
        formation,
      );
    }
    expect(matched).toBeGreaterThan(500);
  });

  it('gives the same result for the same candidates in any order', () => {
    const random = mulberry32(7);
    for (let iteration = 0; iteration < ITERATIONS / 2; iteration++) {
      const scenario = randomScenario(random);
      const formation = formMatches(scenario.candidates, scenario.rules, now);
      expect(formMatches(scenario.candidates, scenario.rules, now)).toEqual(formation);
      expect(
        formMatches(shuffled(random, scenario.candidates), shuffled(random, scenario.rules), now),
      ).toEqual(formation);
    }
  });

  it('matches a pair that is incompatible when fresh once both have waited past a step', () => {
    const random = mulberry32(99);
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const first = { afterMs: 0, maxRttMs: 30 + Math.floor(random() * 50), ratingWindow: 50 };
      const second = {
        afterMs: 1_000 + Math.floor(random() * 30) * 1_000,
        maxRttMs: first.maxRttMs + 1 + Math.floor(random() * 100),
        ratingWindow: first.ratingWindow + 1 + Math.floor(random() * 200),
      };
      const rules: ModeRules = {
        mode: 'duel',
        teamSize: 1,
        teamCount: 2,
        widening: [first, second],
      };
      // Too far apart on one axis for the first step, close enough for the second.
      const region = pick(random, REGIONS);
      const byRtt = random() < 0.5;
      const worstRtt = byRtt
        ? first.maxRttMs + 1 + Math.floor(random() * (second.maxRttMs - first.maxRttMs))
        : Math.floor(random() * (first.maxRttMs + 1));
      const rtts = [worstRtt, Math.floor(random() * (worstRtt + 1))];
      const gap = byRtt
        ? Math.floor(random() * (first.ratingWindow + 1))
        : first.ratingWindow +
          1 +
          Math.floor(random() * (second.ratingWindow - first.ratingWindow));
      const pair = (waitedMs: number): MatchCandidate[] =>
        rtts.map((rtt, i) => ({
          ticketId: uuid(1, i + 1),
          playerId: uuid(2, i + 1),
          mode: 'duel',
          rating: 1500 + i * gap,
          predictedRtt: { [region]: rtt },
          enqueuedAt: new Date(now.getTime() - waitedMs - i),
        }));
      expect(formMatches(pair(0), [rules], now).matches).toEqual([]);
      const waited = formMatches(pair(second.afterMs), [rules], now);
      expect(waited.matches).toHaveLength(1);
      expect(waited.matches[0]?.maxRttMs).toBe(second.maxRttMs);
    }
  });
});
