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
  if (ratings.length !== teamSize * teamCount) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `${ratings.length} ratings cannot form ${teamCount} teams of ${teamSize}`,
    );
  }
  const order = ratings
    .map((rating, index) => ({ rating, index }))
    .sort((a, b) => b.rating - a.rating || a.index - b.index);
  const teams = new Array<number>(ratings.length).fill(0);
  if (teamCount === 2 && ratings.length <= EXACT_SPLIT_MAX_PLAYERS) {
    const inFirstTeam = bestTwoWaySplit(
      order.map((entry) => entry.rating),
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
 * The split of `sorted` (descending) into two halves with the smallest sum difference; the first
 * team always holds the top-rated player (which also removes the mirror-image duplicates), and
 * the first minimum in mask order wins, so the result is deterministic.
 */
function bestTwoWaySplit(sorted: readonly number[], teamSize: number): boolean[] {
  const rest = sorted.length - 1;
  let bestMask = -1;
  let bestDifference = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < 1 << rest; mask++) {
    if (popCount(mask) !== teamSize - 1) continue;
    let first = sorted[0] ?? 0;
    let second = 0;
    for (let bit = 0; bit < rest; bit++) {
      const rating = sorted[bit + 1] ?? 0;
      if (mask & (1 << bit)) first += rating;
      else second += rating;
    }
    const difference = Math.abs(first - second);
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
