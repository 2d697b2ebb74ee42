/**
 * Property tests of mode shapes (issue 34 item 1) over random pools from a seeded PRNG: modes of
 * unequal teams and modes with fill steps, solos and parties (some too large, some incomplete),
 * anchors of every wait. The checks read only input and output.
 */
import { formMatches, type MatchCandidate, type MatchFormation } from './match-formation';
import { minPlayersAt, teamSizesFor } from './match-size';
import { playersPerMatch, type ModeRules } from './mode-rules';
import { partiesSplit } from './party-integrity';
import { forEachSeed } from '../../../../test/support/seeded-random';

const now = new Date('2026-12-01T10:00:00.000Z');
const REGIONS = ['eu-west', 'us-east'];
const ITERATIONS = 300;

type Random = () => number;
const int = (random: Random, below: number) => Math.floor(random() * below);
const uuid = (kind: number, n: number) =>
  `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

const SHAPES: readonly Omit<ModeRules, 'widening'>[] = [
  { mode: 'hunt', teamSize: 4, teamCount: 2, teamSizes: [4, 1] },
  { mode: 'uneven', teamSize: 3, teamCount: 3, teamSizes: [3, 1, 2] },
  {
    mode: 'br',
    teamSize: 1,
    teamCount: 12,
    fill: [
      { afterMs: 10_000, minPlayers: 8 },
      { afterMs: 30_000, minPlayers: 4 },
    ],
  },
  { mode: 'squads', teamSize: 3, teamCount: 5, fill: [{ afterMs: 20_000, minPlayers: 9 }] },
];

interface Scenario {
  readonly rules: ModeRules[];
  readonly candidates: MatchCandidate[];
}

function randomScenario(random: Random): Scenario {
  const rules: ModeRules[] = SHAPES.map((shape) => ({
    ...shape,
    widening: [
      { afterMs: 0, maxRttMs: 40 + int(random, 80), ratingWindow: 100 + int(random, 6) * 50 },
      { afterMs: 30_000, maxRttMs: 400, ratingWindow: Number.POSITIVE_INFINITY },
    ],
  }));
  const candidates: MatchCandidate[] = [];
  let ticket = 0;
  let parties = 0;
  for (let g = int(random, 60); g > 0; g--) {
    const rule = rules[int(random, rules.length)] as ModeRules;
    const isParty = rule.teamSize > 1 && random() < 0.3;
    const size = isParty ? 2 + int(random, rule.teamSize) : 1;
    const missing = isParty && random() < 0.1 ? 1 : 0;
    const partyId = isParty ? uuid(3, ++parties) : undefined;
    const enqueuedAt = new Date(now.getTime() - int(random, 45) * 1_000);
    for (let m = 0; m < size - missing; m++) {
      ticket += 1;
      const predictedRtt: Record<string, number> = {};
      for (const region of REGIONS) if (random() < 0.85) predictedRtt[region] = int(random, 200);
      candidates.push({
        ticketId: uuid(1, ticket),
        playerId: uuid(2, ticket),
        mode: rule.mode,
        rating: 1000 + int(random, 40) * 25,
        predictedRtt,
        enqueuedAt,
        ...(partyId ? { party: { id: partyId, size } } : {}),
      });
    }
  }
  return { rules, candidates };
}

function forEachScenario(check: (scenario: Scenario, formation: MatchFormation) => void): void {
  forEachSeed(ITERATIONS, randomScenario, (scenario) =>
    check(scenario, formMatches(scenario.candidates, scenario.rules, now)),
  );
}

describe('mode shapes (property)', () => {
  it('never over the maximum nor under the anchor’s minimum, teams as declared, parties whole', () => {
    let shortMatches = 0;
    let asymmetric = 0;
    forEachScenario(({ rules, candidates }, formation) => {
      const byTicket = new Map(candidates.map((c) => [c.ticketId, c]));
      expect(partiesSplit(formation.matches, candidates)).toEqual([]);
      for (const match of formation.matches) {
        const rule = rules.find((r) => r.mode === match.mode) as ModeRules;
        const anchor = byTicket.get(match.anchorTicketId) as MatchCandidate;
        const waitedMs = now.getTime() - anchor.enqueuedAt.getTime();
        const players = match.participants.length;
        expect(players).toBeLessThanOrEqual(playersPerMatch(rule));
        expect(players).toBeGreaterThanOrEqual(minPlayersAt(rule, waitedMs));
        const sizes = teamSizesFor(rule, waitedMs, players);
        expect(sizes).not.toBeNull();
        const perTeam = new Array<number>(sizes?.length ?? 0).fill(0);
        for (const p of match.participants) perTeam[p.team] = (perTeam[p.team] ?? 0) + 1;
        expect(perTeam).toEqual(sizes);
        if (players < playersPerMatch(rule)) shortMatches += 1;
        if (rule.teamSizes) asymmetric += 1;
      }
    });
    // The pools exercise both shapes.
    expect(shortMatches).toBeGreaterThan(50);
    expect(asymmetric).toBeGreaterThan(50);
  });

  it('explains a waiting solo of a fill mode MATCH_TOO_SMALL only when no region reaches its minimum', () => {
    let tooSmall = 0;
    forEachScenario(({ candidates }, formation) => {
      const modeOf = new Map(candidates.map((c) => [c.ticketId, c.mode]));
      for (const { ticketId, reason } of formation.unmatched) {
        if (reason.code !== 'MATCH_TOO_SMALL') continue;
        tooSmall += 1;
        // Solos only: parties that do not pack into whole teams wait with players in range.
        if (modeOf.get(ticketId) !== 'br') continue;
        const best = reason.details.regions[0];
        if (best) expect(best.available).toBeLessThan(reason.details.minPlayers);
      }
    });
    expect(tooSmall).toBeGreaterThan(50);
  });

  it('is deterministic: the same pool in any order gives the same matches', () => {
    forEachScenario((scenario, formation) => {
      expect(formMatches([...scenario.candidates].reverse(), scenario.rules, now)).toEqual(
        formation,
      );
    });
  });
});
