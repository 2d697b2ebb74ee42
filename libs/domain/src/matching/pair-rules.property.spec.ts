/**
 * Property tests of the pair rules (intersect, equal optional after a wait) on random pools from
 * a seeded PRNG: formMatches forms exactly what a whole-pool scan of the documented algorithm
 * forms, and no match breaks a rule still in force for its anchor.
 */
import { mulberry32 } from '../../../../test/support/seeded-random';
import type { AttributeRule } from './attribute-rules';
import { formMatches, type MatchCandidate, type ProposedMatch } from './match-formation';
import { playersPerMatch, type ModeRules } from './mode-rules';
import { withinRatingWindow } from './region-bucket';

const now = new Date('2026-12-01T10:00:00.000Z');
const REGIONS = ['eu-west', 'us-east', 'us-west'];
const PLATFORMS = ['pc', 'ps', 'xbox'];
const ITERATIONS = 300;

type Random = () => number;
const uuid = (kind: number, n: number) =>
  `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

interface Scenario {
  readonly rules: ModeRules;
  readonly candidates: MatchCandidate[];
}

function randomScenario(random: Random): Scenario {
  const intersectAfter = random() < 0.5 ? undefined : Math.floor(random() * 60) * 1_000;
  const buildAfter = Math.floor(random() * 60) * 1_000;
  const attributeRules: AttributeRule[] = [
    { kind: 'equal', attribute: 'build', optionalAfterMs: buildAfter },
    {
      kind: 'intersect',
      attribute: 'platforms',
      ...(intersectAfter === undefined ? {} : { optionalAfterMs: intersectAfter }),
    },
  ];
  const teamCount = 2 + Math.floor(random() * 2);
  const rules: ModeRules = {
    mode: 'm',
    teamSize: 1 + Math.floor(random() * 2),
    teamCount,
    widening: [
      { afterMs: 0, maxRttMs: 40 + Math.floor(random() * 80), ratingWindow: 100 + random() * 400 },
    ],
    attributeRules,
  };
  const count = Math.floor(random() * 50);
  const candidates = Array.from({ length: count }, (_, index): MatchCandidate => {
    const predictedRtt: Record<string, number> = {};
    for (const region of REGIONS) {
      if (random() < 0.7) predictedRtt[region] = 10 + Math.floor(random() * 120);
    }
    if (Object.keys(predictedRtt).length === 0) predictedRtt['eu-west'] = 30;
    const platforms = PLATFORMS.filter(() => random() < 0.45);
    return {
      ticketId: uuid(1, index + 1),
      playerId: uuid(2, index + 1),
      mode: 'm',
      rating: 1200 + Math.floor(random() * 600),
      predictedRtt,
      enqueuedAt: new Date(now.getTime() - Math.floor(random() * 90) * 1_000),
      attributes: {
        build: random() < 0.6 ? '1.5' : '1.4',
        platforms: platforms.length > 0 ? platforms : [PLATFORMS[index % 3] as string],
      },
    };
  });
  return { rules, candidates };
}

const platformsOf = (c: MatchCandidate) => c.attributes?.['platforms'] as readonly string[];
const waitedOf = (c: MatchCandidate) => now.getTime() - c.enqueuedAt.getTime();
const byAge = (a: MatchCandidate, b: MatchCandidate) =>
  a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || (a.ticketId < b.ticketId ? -1 : 1);

function inForce(rules: ModeRules, anchor: MatchCandidate, kind: 'equal' | 'intersect'): boolean {
  const rule = rules.attributeRules?.find((r) => r.kind === kind);
  const after = rule && rule.kind !== 'distance' ? rule.optionalAfterMs : undefined;
  return after === undefined || waitedOf(anchor) < after;
}

function cost(members: readonly MatchCandidate[], region: string) {
  let worst = 0;
  let sum = 0;
  for (const member of members) {
    const rtt = member.predictedRtt[region];
    if (rtt === undefined) return null;
    worst = Math.max(worst, rtt);
    sum += rtt;
  }
  return { worst, sum };
}

function bestRegion(members: readonly MatchCandidate[]): string | undefined {
  let best: { region: string; worst: number; sum: number } | undefined;
  for (const region of REGIONS) {
    const c = cost(members, region);
    if (c && (!best || c.worst < best.worst || (c.worst === best.worst && c.sum < best.sum))) {
      best = { region, ...c };
    }
  }
  return best?.region;
}

/**
 * The documented algorithm by whole-pool scans: each anchor, oldest first, tries each value of
 * its set (while the intersect rule is in force) and each region, taking the oldest partners
 * within its limits that hold that value (and its build, while that rule is in force).
 */
function referenceMatches({ rules, candidates }: Scenario): string[] {
  const pool = [...candidates].sort(byAge);
  const used = new Set<MatchCandidate>();
  const step = rules.widening[0]!;
  const out: string[] = [];
  for (const anchor of pool) {
    if (used.has(anchor)) continue;
    const sameBuild = inForce(rules, anchor, 'equal');
    const choices = inForce(rules, anchor, 'intersect') ? [...platformsOf(anchor)].sort() : [null];
    let chosen: { region: string; members: MatchCandidate[]; worst: number; sum: number } | null =
      null;
    for (const value of choices) {
      for (const region of REGIONS) {
        const anchorRtt = anchor.predictedRtt[region];
        if (anchorRtt === undefined || anchorRtt > step.maxRttMs) continue;
        const partners = pool
          .filter(
            (c) =>
              c !== anchor &&
              !used.has(c) &&
              (c.predictedRtt[region] ?? Infinity) <= step.maxRttMs &&
              withinRatingWindow(c.rating, anchor.rating, step.ratingWindow) &&
              (!sameBuild || c.attributes?.['build'] === anchor.attributes?.['build']) &&
              (value === null || platformsOf(c).includes(value)),
          )
          .slice(0, playersPerMatch(rules) - 1);
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
    }
    if (!chosen) continue;
    for (const member of chosen.members) used.add(member);
    out.push(
      matchText(
        anchor.ticketId,
        chosen.region,
        chosen.members.map((m) => m.ticketId),
      ),
    );
  }
  return out;
}

function matchText(anchor: string, region: string, tickets: readonly string[]): string {
  return `${region}<${anchor}>:${[...tickets].sort().join(',')}`;
}

const described = (matches: readonly ProposedMatch[]) =>
  matches.map((m) =>
    matchText(
      m.anchorTicketId,
      m.region,
      m.participants.map((p) => p.ticketId),
    ),
  );

describe(`${formMatches.name} with pair rules on random pools`, () => {
  it(`forms exactly what a whole-pool scan forms, never breaking a rule in force, on ${ITERATIONS} pools`, () => {
    const random = mulberry32(3434);
    let matched = 0;
    let waived = 0;
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      const scenario = randomScenario(random);
      const formation = formMatches(scenario.candidates, [scenario.rules], now);
      expect(described(formation.matches)).toEqual(referenceMatches(scenario));
      const byTicket = new Map(scenario.candidates.map((c) => [c.ticketId, c]));
      for (const match of formation.matches) {
        const members = match.participants.map((p) => byTicket.get(p.ticketId)!);
        const anchor = byTicket.get(match.anchorTicketId)!;
        // The anchor's wait relaxes a rule for the whole match (an older participant is one
        // whose own search found nothing; it has waited longer still).
        expect(members).toContain(anchor);
        const common = PLATFORMS.filter((p) => members.every((m) => platformsOf(m).includes(p)));
        if (inForce(scenario.rules, anchor, 'intersect')) expect(common).not.toEqual([]);
        else if (common.length === 0) waived++;
        const builds = new Set(members.map((m) => m.attributes?.['build']));
        if (inForce(scenario.rules, anchor, 'equal')) expect(builds.size).toBe(1);
        else if (builds.size > 1) waived++;
      }
      matched += formation.matches.length;
    }
    // The pools exercise both sides: matches under the rules, and matches a waived rule allowed.
    expect(matched).toBeGreaterThan(300);
    expect(waived).toBeGreaterThan(20);
  });
});
