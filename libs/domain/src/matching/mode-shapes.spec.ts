/** Mode shapes (issue 34 item 1): asymmetric teams, each team of its own declared size. */
import { DomainError } from '../shared/domain.error';
import { formMatches, type MatchCandidate, type ProposedMatch } from './match-formation';
import { assertModeRules, playersPerMatch, teamSizesOf, type ModeRules } from './mode-rules';
import { balanceGroups, TeamPacking } from './party-teams';
import { mulberry32 } from '../../../../test/support/seeded-random';
import { newCandidate, numberedUuid } from '../../../../test/support/match-candidates';

const now = new Date('2026-12-01T10:00:00.000Z');

const hunt: ModeRules = {
  mode: 'hunt',
  teamSize: 4,
  teamCount: 2,
  teamSizes: [4, 1],
  widening: [{ afterMs: 0, maxRttMs: 100, ratingWindow: Number.POSITIVE_INFINITY }],
};

const uuid = numberedUuid;

/** Hunt candidate `n`: the lower `n`, the longer it has waited. */
const candidate = (n: number, extra: Partial<MatchCandidate> = {}): MatchCandidate =>
  newCandidate(n, now, (100 - n) * 1_000, { mode: 'hunt', ...extra });

function teamsOf(match: ProposedMatch): Map<number, string[]> {
  const teams = new Map<number, string[]>();
  for (const p of match.participants) teams.set(p.team, [...(teams.get(p.team) ?? []), p.ticketId]);
  return teams;
}

describe('asymmetric teams', () => {
  it('counts a match as the sum of its teams and each team by its own size', () => {
    expect(playersPerMatch(hunt)).toBe(5);
    expect(teamSizesOf(hunt)).toEqual([4, 1]);
    expect(teamSizesOf({ ...hunt, teamSizes: undefined })).toEqual([4, 4]);
  });

  it('forms 4 v 1 and puts on the team of one the player closest to the other team mean', () => {
    const ratings = [1000, 1200, 1400, 1600, 1300];
    const pool = ratings.map((rating, i) => candidate(i + 1, { rating }));
    const { matches, unmatched } = formMatches(pool, [hunt], now);
    expect(unmatched).toEqual([]);
    const [match] = matches as [ProposedMatch];
    const teams = teamsOf(match);
    expect(teams.get(0)).toHaveLength(4);
    // The monster's rating (1300) equals the hunters' mean: |mean(team 0) - mean(team 1)| = 0.
    expect(teams.get(1)).toEqual([uuid(1, 5)]);
  });

  it('keeps a party whole on the team that holds it, never on the team of one', () => {
    const party = { id: `30000000-0000-4000-8000-000000000001`, size: 2 };
    const pool = [
      candidate(1, { party, rating: 2000 }),
      candidate(2, { party, rating: 2000 }),
      candidate(3, { rating: 1000 }),
      candidate(4, { rating: 1000 }),
      candidate(5, { rating: 2000 }),
    ];
    const [match] = formMatches(pool, [hunt], now).matches as [ProposedMatch];
    const partyTeam = match.participants.filter((p) => p.partyId === party.id).map((p) => p.team);
    expect(partyTeam).toEqual([0, 0]);
    expect(teamsOf(match).get(1)).toHaveLength(1);
  });

  it('passes over a party that fits no team left and waits for a solo to fill the team of one', () => {
    const four = { id: `30000000-0000-4000-8000-000000000001`, size: 4 };
    const two = { id: `30000000-0000-4000-8000-000000000002`, size: 2 };
    const pool = [
      ...[1, 2, 3, 4].map((n) => candidate(n, { party: four })),
      ...[5, 6].map((n) => candidate(n, { party: two })),
    ];
    const first = formMatches(pool, [hunt], now);
    expect(first.matches).toEqual([]);
    expect(first.unmatched.map((u) => u.reason.code)).toContain('NOT_ENOUGH_PLAYERS');
    const { matches } = formMatches([...pool, candidate(7)], [hunt], now);
    expect(matches).toHaveLength(1);
    expect(teamsOf(matches[0] as ProposedMatch).get(1)).toEqual([uuid(1, 7)]);
  });

  it('refuses rules whose teamSizes do not match teamCount or teamSize', () => {
    expect(() => assertModeRules([{ ...hunt, teamSizes: [4, 1, 1] }])).toThrow(
      /teamSizes must list teamCount \(2\) sizes/,
    );
    expect(() => assertModeRules([{ ...hunt, teamSizes: [3, 1] }])).toThrow(
      /teamSize must be the largest of teamSizes/,
    );
    expect(() => assertModeRules([{ ...hunt, teamSizes: [4, 0] }])).toThrow(DomainError);
  });
});

describe(TeamPacking.name, () => {
  it('fills each team up to its own size', () => {
    const packing = new TeamPacking([4, 1]);
    expect(packing.add(3)).toBe(0);
    // Neither team has room for 2; a solo goes to the least room that holds it, ties to team 0.
    expect(packing.fits(2)).toBe(false);
    expect(packing.add(1)).toBe(0);
    expect(packing.add(1)).toBe(1);
    expect(packing.fits(1)).toBe(false);
  });
});

describe(`${balanceGroups.name} with teams of different sizes`, () => {
  it('finds the split with the smallest difference of team means (brute force)', () => {
    const random = mulberry32(11);
    const int = (below: number) => Math.floor(random() * below);
    for (let run = 0; run < 300; run++) {
      const sizes = [2 + int(4), 1 + int(2)];
      const groupSizes: number[] = [];
      const feasible: number[] = [];
      sizes.forEach((teamSize, team) => {
        for (let room = teamSize; room > 0;) {
          const size = 1 + int(room);
          groupSizes.push(size);
          feasible.push(team);
          room -= size;
        }
      });
      const groups = groupSizes.map((size) => ({
        skills: Array.from({ length: size }, () => ({ mean: 1000 + int(40) * 25, uncertainty: 0 })),
      }));
      const sums = groups.map((g) => g.skills.reduce((a, s) => a + s.mean, 0));
      const total = sums.reduce((a, b) => a + b, 0);
      const [first = 0, second = 0] = sizes;
      const gap = (teams: readonly number[]) => {
        const inFirst = sums.reduce((a, sum, i) => a + (teams[i] === 0 ? sum : 0), 0);
        return Math.abs(inFirst / first - (total - inFirst) / second);
      };
      const teams = balanceGroups(groups, sizes, feasible);
      const players = [0, 0];
      groupSizes.forEach(
        (size, i) => (players[teams[i] ?? 0] = (players[teams[i] ?? 0] ?? 0) + size),
      );
      expect(players).toEqual(sizes);
      let best = Number.POSITIVE_INFINITY;
      for (let mask = 0; mask < 1 << groups.length; mask++) {
        const split = groupSizes.map((_, i) => (mask & (1 << i) ? 0 : 1));
        const inFirst = groupSizes.reduce((a, size, i) => a + (split[i] === 0 ? size : 0), 0);
        if (inFirst === first) best = Math.min(best, gap(split));
      }
      expect(gap(teams)).toBeCloseTo(best, 9);
    }
  });
});
