/**
 * Property tests of parties in formMatches over random pools from a seeded PRNG (every run checks
 * the same pools; a failing seed reproduces): solos and parties of 2..team size (some larger, some
 * with members missing) in modes of several team shapes, asymmetric ones (4 + 1) among them. The checks read only input and output.
 */
import { formMatches, type MatchCandidate, type MatchFormation } from './match-formation';
import { teamSizesOf, type ModeRules } from './mode-rules';
import { partiesSplit } from './party-integrity';
import { balanceGroups } from './party-teams';
import { forEachSeed, mulberry32 } from '../../../../test/support/seeded-random';

const now = new Date('2026-12-01T10:00:00.000Z');
const REGIONS = ['eu-west', 'us-east', 'us-west'];
const ITERATIONS = 400;

type Random = () => number;

const int = (random: Random, below: number) => Math.floor(random() * below);

function uuid(kind: number, n: number): string {
  return `${kind}0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const SHAPES: readonly Pick<ModeRules, 'mode' | 'teamSize' | 'teamCount' | 'teamSizes'>[] = [
  { mode: 'pair', teamSize: 2, teamCount: 2 },
  { mode: 'trio', teamSize: 3, teamCount: 2 },
  { mode: 'squad', teamSize: 4, teamCount: 2 },
  { mode: 'trios', teamSize: 3, teamCount: 3 },
  { mode: 'big', teamSize: 5, teamCount: 2 },
  // Asymmetric teams (mode shapes): 4 hunters v 1 monster, and three teams of unequal sizes.
  { mode: 'hunt', teamSize: 4, teamCount: 2, teamSizes: [4, 1] },
  { mode: 'uneven', teamSize: 3, teamCount: 3, teamSizes: [1, 3, 2] },
];

interface Scenario {
  readonly rules: ModeRules[];
  readonly candidates: MatchCandidate[];
  /** Parties whose members are all in `candidates` and fit a team of their mode. */
  readonly wholeParties: ReadonlySet<string>;
}

function randomScenario(random: Random): Scenario {
  const shapes = [...SHAPES].sort(() => random() - 0.5).slice(0, 1 + int(random, 2));
  const rules: ModeRules[] = shapes.map((shape) => ({
    ...shape,
    widening: [
      { afterMs: 0, maxRttMs: 40 + int(random, 80), ratingWindow: 50 + int(random, 6) * 50 },
      { afterMs: 30_000, maxRttMs: 400, ratingWindow: Number.POSITIVE_INFINITY },
    ],
  }));
  const candidates: MatchCandidate[] = [];
  const wholeParties = new Set<string>();
  let ticket = 0;
  let partyCount = 0;
  const groups = int(random, 40);
  for (let g = 0; g < groups; g++) {
    const rule = rules[int(random, rules.length)] as ModeRules;
    // 30% parties of 2..team size; a few one larger than a team, a few missing a member.
    const isParty = random() < 0.3;
    const size = isParty
      ? 2 + int(random, Math.max(1, rule.teamSize - 1) + (random() < 0.1 ? 1 : 0))
      : 1;
    const missing = isParty && random() < 0.1 ? 1 : 0;
    const partyId = isParty ? uuid(3, ++partyCount) : undefined;
    if (partyId && missing === 0 && size <= rule.teamSize) wholeParties.add(partyId);
    const enqueuedAt = new Date(now.getTime() - int(random, 60) * 1_000);
    for (let m = 0; m < size - missing; m++) {
      ticket += 1;
      const predictedRtt: Record<string, number> = {};
      for (const region of REGIONS) {
        if (random() < 0.8) predictedRtt[region] = int(random, 300) / 2;
      }
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
  return { rules, candidates, wholeParties };
}

function forEachScenario(check: (scenario: Scenario, formation: MatchFormation) => void): void {
  forEachSeed(ITERATIONS, randomScenario, (scenario) =>
    check(scenario, formMatches(scenario.candidates, scenario.rules, now)),
  );
}

describe('formMatches with parties (property)', () => {
  it('never splits a party across teams or matches part of one', () => {
    let partiesMatched = 0;
    forEachScenario((scenario, formation) => {
      expect(partiesSplit(formation.matches, scenario.candidates)).toEqual([]);
      for (const match of formation.matches) {
        const parties = new Set(match.participants.flatMap((p) => (p.partyId ? [p.partyId] : [])));
        partiesMatched += parties.size;
        for (const partyId of parties) expect(scenario.wholeParties.has(partyId)).toBe(true);
      }
    });
    // The pools do exercise parties: many were matched.
    expect(partiesMatched).toBeGreaterThan(200);
  });

  it('fills every team exactly, with everyone in a region all of them measured within the limit', () => {
    let asymmetricMatches = 0;
    forEachScenario((scenario, formation) => {
      const byTicket = new Map(scenario.candidates.map((c) => [c.ticketId, c]));
      const seenPlayers = new Set<string>();
      for (const match of formation.matches) {
        const rule = scenario.rules.find((r) => r.mode === match.mode) as ModeRules;
        const perTeam = new Array<number>(rule.teamCount).fill(0);
        for (const participant of match.participants) {
          perTeam[participant.team] = (perTeam[participant.team] ?? 0) + 1;
          expect(seenPlayers.has(participant.playerId)).toBe(false);
          seenPlayers.add(participant.playerId);
          const rtt = byTicket.get(participant.ticketId)?.predictedRtt[match.region];
          expect(rtt).toBe(participant.rttMs);
          expect(rtt).toBeLessThanOrEqual(match.maxRttMs);
        }
        expect(perTeam).toEqual(teamSizesOf(rule));
        if (rule.teamSizes) asymmetricMatches += 1;
      }
    });
    // The pools do exercise teams of different sizes.
    expect(asymmetricMatches).toBeGreaterThan(100);
  });

  it('accounts for every ticket once, and explains every member of a party that cannot play', () => {
    forEachScenario((scenario, formation) => {
      const matched = formation.matches.flatMap((m) => m.participants.map((p) => p.ticketId));
      const unmatched = new Map(formation.unmatched.map((u) => [u.ticketId, u.reason]));
      expect(matched.length + unmatched.size).toBe(scenario.candidates.length);
      for (const candidate of scenario.candidates) {
        const partyId = candidate.party?.id;
        if (partyId === undefined || scenario.wholeParties.has(partyId)) continue;
        // A member that measured nothing at all says so; its mates wait for it.
        expect(['PARTY_INCOMPLETE', 'PARTY_TOO_LARGE', 'NO_REGION']).toContain(
          unmatched.get(candidate.ticketId)?.code,
        );
      }
    });
  });

  it('is deterministic: the same pool in any order gives the same matches', () => {
    forEachScenario((scenario, formation) => {
      const reversed = formMatches([...scenario.candidates].reverse(), scenario.rules, now);
      expect(reversed).toEqual(formation);
    });
  });
});

describe(balanceGroups.name, () => {
  it('keeps groups whole and teams exact, and finds the best two-team split up to 10 players', () => {
    const random = mulberry32(7);
    for (let run = 0; run < 500; run++) {
      const teamSize = 2 + int(random, 4);
      const sizes: number[] = [];
      const feasible: number[] = [];
      let left = teamSize * 2;
      // Sizes that are known to pack: fill each team with a random composition.
      for (let team = 0; team < 2; team++) {
        let room = teamSize;
        while (room > 0) {
          const size = 1 + int(random, room);
          sizes.push(size);
          feasible.push(team);
          room -= size;
          left -= size;
        }
      }
      expect(left).toBe(0);
      const ratingsOf = sizes.map((size) =>
        Array.from({ length: size }, () => 1000 + int(random, 40) * 25),
      );
      // Uncertainty 0: the balance is on means alone, which the brute force below checks.
      const groups = ratingsOf.map((ratings) => ({
        ratings,
        skills: ratings.map((mean) => ({ mean, uncertainty: 0 })),
      }));
      const teams = balanceGroups(groups, [teamSize, teamSize], feasible);
      const players: [number, number] = [0, 0];
      const sums: [number, number] = [0, 0];
      groups.forEach((group, index) => {
        const team = teams[index] as 0 | 1;
        players[team] += group.ratings.length;
        sums[team] += group.ratings.reduce((a, b) => a + b, 0);
      });
      expect(players).toEqual([teamSize, teamSize]);
      if (teamSize * 2 <= 10) {
        // Brute force over every split of the groups.
        let best = Number.POSITIVE_INFINITY;
        const totals = groups.map((g) => g.ratings.reduce((a, b) => a + b, 0));
        for (let mask = 0; mask < 1 << groups.length; mask++) {
          let size = 0;
          let first = 0;
          groups.forEach((group, index) => {
            if (mask & (1 << index)) {
              size += group.ratings.length;
              first += totals[index] ?? 0;
            }
          });
          if (size !== teamSize) continue;
          const total = totals.reduce((a, b) => a + b, 0);
          best = Math.min(best, Math.abs(total - 2 * first));
        }
        expect(Math.abs(sums[0] - sums[1])).toBe(best);
      }
    }
  });
});
