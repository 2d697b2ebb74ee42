import { DomainError, DomainErrorCode } from '../shared/domain.error';

/**
 * Up to this many players in two teams the split is searched exhaustively (at most 126 splits);
 * beyond it, or with more than two teams, a snake draft keeps the pass linear.
 */
export const EXACT_SPLIT_MAX_PLAYERS = 10;

/**
 * The team (0-based) of each entry of `ratings`, `teamSize` per team. Deterministic: ties in
 * rating go by position in `ratings`, so the caller's (age) order decides them.
 *
 * Bound: any two teams' rating sums differ by at most max(ratings) - min(ratings). The snake draft
 * gives every team exactly one player from each consecutive block of `teamCount` ratings (sorted
 * descending), so two teams differ per block by at most that block's spread, and the blocks'
 * spreads add up to at most the overall spread; the exact split is never worse than the snake.
 */
export function balanceTeams(
  ratings: readonly number[],
  teamSize: number,
  teamCount: number,
): number[] {
  return balanceTeamsBySkill(
    ratings.map((mean) => ({ mean, uncertainty: 0 })),
    teamSize,
    teamCount,
  );
}

/** A player's skill as team balancing reads it: the mean estimate and its standard deviation. */
export interface BalanceSkill {
  readonly mean: number;
  readonly uncertainty: number;
}

/**
 * Like {@link balanceTeams}, on skills with their uncertainty. The exact two-team split minimises
 * |difference of mean sums| + |difference of team standard deviations| (a team's is the root of
 * its players' summed variances): the larger of the gaps between the teams' pessimistic (mean -
 * sd) and optimistic (mean + sd) strengths. Two splits with equal means so go to the one that
 * spreads the uncertain (new, returning) players over both teams instead of stacking one team
 * with them, whose real strength could then be far from what the match was balanced for. The
 * snake draft (more than 10 players or teams) orders by mean alone. With every uncertainty 0 this
 * is exactly the mean-only balance.
 */
export function balanceTeamsBySkill(
  skills: readonly BalanceSkill[],
  teamSize: number,
  teamCount: number,
): number[] {
  if (skills.length !== teamSize * teamCount) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `${skills.length} ratings cannot form ${teamCount} teams of ${teamSize}`,
    );
  }
  const order = skills
    .map((skill, index) => ({ skill, index }))
    .sort((a, b) => b.skill.mean - a.skill.mean || a.index - b.index);
  const teams = new Array<number>(skills.length).fill(0);
  if (teamCount === 2 && skills.length <= EXACT_SPLIT_MAX_PLAYERS) {
    const inFirstTeam = bestTwoWaySplit(
      order.map((entry) => entry.skill),
      teamSize,
    );
    order.forEach((entry, rank) => (teams[entry.index] = inFirstTeam[rank] ? 0 : 1));
    return teams;
  }
  order.forEach((entry, rank) => {
    const round = Math.floor(rank / teamCount);
    const pick = rank % teamCount;
    teams[entry.index] = round % 2 === 0 ? pick : teamCount - 1 - pick;
  });
  return teams;
}

/**
 * The split of `sorted` (descending by mean) into two halves with the smallest imbalance (see
 * {@link balanceTeamsBySkill}); the first
 * team always holds the top-rated player (which also removes the mirror-image duplicates), and
 * the first minimum in mask order wins, so the result is deterministic.
 */
function bestTwoWaySplit(sorted: readonly BalanceSkill[], teamSize: number): boolean[] {
  const rest = sorted.length - 1;
  let bestMask = -1;
  let bestDifference = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < 1 << rest; mask++) {
    if (popCount(mask) !== teamSize - 1) continue;
    let first = sorted[0]?.mean ?? 0;
    let firstVariance = (sorted[0]?.uncertainty ?? 0) ** 2;
    let second = 0;
    let secondVariance = 0;
    for (let bit = 0; bit < rest; bit++) {
      const skill = sorted[bit + 1];
      const mean = skill?.mean ?? 0;
      const variance = (skill?.uncertainty ?? 0) ** 2;
      if (mask & (1 << bit)) {
        first += mean;
        firstVariance += variance;
      } else {
        second += mean;
        secondVariance += variance;
      }
    }
    const difference =
      Math.abs(first - second) + Math.abs(Math.sqrt(firstVariance) - Math.sqrt(secondVariance));
    if (difference < bestDifference) {
      bestDifference = difference;
      bestMask = mask;
    }
  }
  return sorted.map((_, rank) => rank === 0 || (bestMask & (1 << (rank - 1))) !== 0);
}

function popCount(value: number): number {
  let count = 0;
  for (let rest = value; rest !== 0; rest &= rest - 1) count++;
  return count;
}
