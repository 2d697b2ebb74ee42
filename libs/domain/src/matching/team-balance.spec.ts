import { DomainError } from '../shared/domain.error';
import { balanceTeams, balanceTeamsBySkill, EXACT_SPLIT_MAX_PLAYERS } from './team-balance';
import { mulberry32 } from '../../../../test/support/seeded-random';

function teamSums(
  ratings: readonly number[],
  teams: readonly number[],
  teamCount: number,
): number[] {
  const sums = new Array<number>(teamCount).fill(0);
  teams.forEach((team, index) => (sums[team] = (sums[team] ?? 0) + (ratings[index] ?? 0)));
  return sums;
}

/** Every split of `ratings` into two equal teams, by brute force: the best possible difference. */
function bestDifference(ratings: readonly number[]): number {
  const n = ratings.length;
  let best = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < 1 << n; mask++) {
    let bits = 0;
    let difference = 0;
    for (let i = 0; i < n; i++) {
      const inFirst = (mask & (1 << i)) !== 0;
      if (inFirst) bits++;
      difference += inFirst ? (ratings[i] ?? 0) : -(ratings[i] ?? 0);
    }
    if (bits === n / 2) best = Math.min(best, Math.abs(difference));
  }
  return best;
}

describe(balanceTeams.name, () => {
  it('splits a 2v2 so the sums are as close as possible', () => {
    const ratings = [1800, 1500, 1400, 1100];
    const teams = balanceTeams(ratings, 2, 2);
    expect(teams).toEqual([0, 1, 1, 0]);
    expect(teamSums(ratings, teams, 2)).toEqual([2900, 2900]);
  });

  it('puts the top-rated player in team 0 and breaks rating ties by input position', () => {
    expect(balanceTeams([1500, 1500], 1, 2)).toEqual([0, 1]);
    expect(balanceTeams([1400, 1600], 1, 2)).toEqual([1, 0]);
  });

  it('puts everyone in team 0 when the mode has one team', () => {
    expect(balanceTeams([1, 2, 3], 3, 1)).toEqual([0, 0, 0]);
  });

  it('snake-drafts three teams', () => {
    // Sorted 9..1: rounds (9,8,7) -> 0,1,2; (6,5,4) -> 2,1,0; (3,2,1) -> 0,1,2.
    expect(balanceTeams([9, 8, 7, 6, 5, 4, 3, 2, 1], 3, 3)).toEqual([0, 1, 2, 2, 1, 0, 0, 1, 2]);
  });

  it('refuses a number of ratings that is not teamSize * teamCount', () => {
    expect(() => balanceTeams([1, 2, 3], 2, 2)).toThrow(DomainError);
  });

  it('fills every team exactly and keeps any two teams within max - min rating of each other', () => {
    const random = mulberry32(7);
    for (let iteration = 0; iteration < 2000; iteration++) {
      const teamSize = 1 + Math.floor(random() * 6);
      const teamCount = 1 + Math.floor(random() * 4);
      const ratings = Array.from({ length: teamSize * teamCount }, () =>
        Math.round(800 + random() * 1600),
      );
      const teams = balanceTeams(ratings, teamSize, teamCount);
      for (let team = 0; team < teamCount; team++) {
        expect(teams.filter((t) => t === team)).toHaveLength(teamSize);
      }
      const sums = teamSums(ratings, teams, teamCount);
      const spread = Math.max(...ratings) - Math.min(...ratings);
      expect(Math.max(...sums) - Math.min(...sums)).toBeLessThanOrEqual(spread);
      expect(balanceTeams(ratings, teamSize, teamCount)).toEqual(teams);
    }
  });

  it(`finds the best two-team split up to ${EXACT_SPLIT_MAX_PLAYERS} players`, () => {
    const random = mulberry32(11);
    for (let iteration = 0; iteration < 500; iteration++) {
      const teamSize = 1 + Math.floor(random() * (EXACT_SPLIT_MAX_PLAYERS / 2));
      const ratings = Array.from({ length: 2 * teamSize }, () => Math.round(random() * 3000));
      const [first = 0, second = 0] = teamSums(ratings, balanceTeams(ratings, teamSize, 2), 2);
      expect(Math.abs(first - second)).toBe(bestDifference(ratings));
    }
  });
});

describe(balanceTeamsBySkill.name, () => {
  it('spreads uncertain players over both teams where the means alone cannot tell splits apart', () => {
    // Two veterans and two newcomers, all of the same mean: by means every split is even, and the
    // mean-only balance stacks both newcomers on one team (the first split in mask order).
    const skills = [
      { mean: 1500, uncertainty: 40 },
      { mean: 1500, uncertainty: 40 },
      { mean: 1500, uncertainty: 400 },
      { mean: 1500, uncertainty: 400 },
    ];
    expect(
      balanceTeams(
        skills.map((s) => s.mean),
        2,
        2,
      ),
    ).toEqual([0, 0, 1, 1]);
    const teams = balanceTeamsBySkill(skills, 2, 2);
    expect(teams[2]).not.toBe(teams[3]);
    expect(teams[0]).not.toBe(teams[1]);
  });

  it('answers what balanceTeams answers when every uncertainty is 0', () => {
    const random = mulberry32(7);
    for (let round = 0; round < 200; round++) {
      const ratings = Array.from({ length: 8 }, () => Math.round(1000 + random() * 1000));
      expect(
        balanceTeamsBySkill(
          ratings.map((mean) => ({ mean, uncertainty: 0 })),
          4,
          2,
        ),
      ).toEqual(balanceTeams(ratings, 4, 2));
    }
  });
});
