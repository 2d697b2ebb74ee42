import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { balanceTeamsBySkill, EXACT_SPLIT_MAX_PLAYERS, type BalanceSkill } from './team-balance';

/** A party (or a solo player: a group of one) as team balance sees it: whole, on one team. */
export interface TeamGroup {
  /** The members' skills; the group weighs their summed means (and summed variances). */
  readonly skills: readonly BalanceSkill[];
}

/**
 * Teams filling up as groups are added: each group goes whole into the team with the least room
 * that still holds it (best fit, ties to the lowest index), so what is left stays as usable as
 * possible for larger groups. Selection asks `fits` before adding: a group that fits nowhere is
 * passed over, never split. Best fit can refuse a group a re-packing would have taken; that group
 * only waits for the next match.
 */
export class TeamPacking {
  private readonly free: number[];
  private readonly teamOfGroup: number[] = [];

  /** `sizes`: each team's size, in team order (see teamSizesOf). */
  constructor(sizes: readonly number[]) {
    this.free = [...sizes];
  }

  fits(size: number): boolean {
    return this.teamFor(size) >= 0;
  }

  /** Adds a group of `size` (it must fit) and answers its team. */
  add(size: number): number {
    const team = this.teamFor(size);
    if (team < 0) {
      throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, `no team has room for ${size}`);
    }
    this.free[team] = (this.free[team] ?? 0) - size;
    this.teamOfGroup.push(team);
    return team;
  }

  /** The team of each group, in the order they were added. */
  get teams(): readonly number[] {
    return this.teamOfGroup;
  }

  private teamFor(size: number): number {
    let best = -1;
    this.free.forEach((room, team) => {
      if (room >= size && (best < 0 || room < (this.free[best] ?? 0))) best = team;
    });
    return best;
  }
}

/**
 * The team (0-based) of each group, every group whole on one team and `sizes[i]` players on team
 * i, balanced by skill. Solo players only and equal teams: exactly {@link balanceTeamsBySkill}.
 * Two teams of at most EXACT_SPLIT_MAX_PLAYERS: the split with the smallest imbalance as
 * balanceTeamsBySkill measures it (mean sums' difference plus the teams' standard deviations'
 * difference; with equal teams the first team holds the group of the highest mean sum; the first
 * minimum wins). Otherwise the largest groups go first, each to the team with the lowest rating
 * sum that has room; if that greedy order cannot place every group, `feasible` (a packing known to
 * work, e.g. the selection's) is used as is. Teams of different sizes (4 v 1) compare team means
 * (sum / size) and the standard deviation of that mean wherever equal teams compare sums.
 * Deterministic: ties go by position in `groups`.
 */
export function balanceGroups(
  groups: readonly TeamGroup[],
  sizes: readonly number[],
  feasible: readonly number[],
): number[] {
  const groupSizes = groups.map((group) => group.skills.length);
  const players = groupSizes.reduce((total, size) => total + size, 0);
  const largest = Math.max(...sizes);
  if (
    players !== sizes.reduce((total, size) => total + size, 0) ||
    groupSizes.some((size) => size < 1 || size > largest)
  ) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `groups of ${groupSizes.join('/')} cannot form teams of ${sizes.join('/')}`,
    );
  }
  const equalTeams = sizes.every((size) => size === largest);
  if (equalTeams && groupSizes.every((size) => size === 1)) {
    return balanceTeamsBySkill(
      groups.map((group) => group.skills[0] ?? { mean: 0, uncertainty: 0 }),
      largest,
      sizes.length,
    );
  }
  const sums = groups.map((group) => group.skills.reduce((total, skill) => total + skill.mean, 0));
  const variances = groups.map((group) =>
    group.skills.reduce((total, skill) => total + skill.uncertainty ** 2, 0),
  );
  if (sizes.length === 2 && players <= EXACT_SPLIT_MAX_PLAYERS) {
    const exact = equalTeams
      ? bestTwoWayGroupSplit(groupSizes, sums, variances, largest)
      : bestUnequalTwoWaySplit(groupSizes, sums, variances, sizes);
    if (exact) return exact;
  }
  return greedyGroups(groupSizes, sums, sizes) ?? [...feasible];
}

/**
 * Teams of different sizes: every assignment of groups to the two teams (at most 2^groups, groups
 * <= EXACT_SPLIT_MAX_PLAYERS) that fills both, by team means' difference plus the difference of
 * the standard deviations of those means; the first minimum in mask order wins.
 */
function bestUnequalTwoWaySplit(
  groupSizes: readonly number[],
  sums: readonly number[],
  variances: readonly number[],
  sizes: readonly number[],
): number[] | null {
  const [firstSize = 0, secondSize = 0] = sizes;
  const total = sums.reduce((a, b) => a + b, 0);
  const totalVariance = variances.reduce((a, b) => a + b, 0);
  let best = -1;
  let bestDifference = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < 1 << groupSizes.length; mask++) {
    let size = 0;
    let first = 0;
    let firstVariance = 0;
    groupSizes.forEach((groupSize, index) => {
      if (!(mask & (1 << index))) return;
      size += groupSize;
      first += sums[index] ?? 0;
      firstVariance += variances[index] ?? 0;
    });
    if (size !== firstSize) continue;
    const difference =
      Math.abs(first / firstSize - (total - first) / secondSize) +
      Math.abs(
        Math.sqrt(firstVariance) / firstSize -
          Math.sqrt(totalVariance - firstVariance) / secondSize,
      );
    if (difference < bestDifference) {
      bestDifference = difference;
      best = mask;
    }
  }
  if (best < 0) return null;
  return groupSizes.map((_, index) => (best & (1 << index) ? 0 : 1));
}

/** Exhaustive over at most 2^(groups - 1) splits (groups <= players <= EXACT_SPLIT_MAX_PLAYERS). */
function bestTwoWayGroupSplit(
  sizes: readonly number[],
  sums: readonly number[],
  variances: readonly number[],
  teamSize: number,
): number[] | null {
  const order = sums
    .map((sum, index) => ({ sum, index }))
    .sort((a, b) => b.sum - a.sum || a.index - b.index);
  const top = order[0];
  if (!top) return null;
  const rest = order.slice(1);
  const total = sums.reduce((a, b) => a + b, 0);
  const totalVariance = variances.reduce((a, b) => a + b, 0);
  let best: number | null = null;
  let bestDifference = Number.POSITIVE_INFINITY;
  for (let mask = 0; mask < 1 << rest.length; mask++) {
    let size = sizes[top.index] ?? 0;
    let first = top.sum;
    let firstVariance = variances[top.index] ?? 0;
    rest.forEach((entry, bit) => {
      if (mask & (1 << bit)) {
        size += sizes[entry.index] ?? 0;
        first += entry.sum;
        firstVariance += variances[entry.index] ?? 0;
      }
    });
    if (size !== teamSize) continue;
    const difference =
      Math.abs(first - (total - first)) +
      Math.abs(Math.sqrt(firstVariance) - Math.sqrt(totalVariance - firstVariance));
    if (difference < bestDifference) {
      bestDifference = difference;
      best = mask;
    }
  }
  if (best === null) return null;
  const chosen = best;
  const teams = new Array<number>(sizes.length).fill(1);
  teams[top.index] = 0;
  rest.forEach((entry, bit) => {
    if (chosen & (1 << bit)) teams[entry.index] = 0;
  });
  return teams;
}

function greedyGroups(
  sizes: readonly number[],
  sums: readonly number[],
  teamSizes: readonly number[],
): number[] | null {
  const teamCount = teamSizes.length;
  const free = [...teamSizes];
  const totals = new Array<number>(teamCount).fill(0);
  const equalTeams = teamSizes.every((size) => size === teamSizes[0]);
  // Equal teams compare sums (as they always have); unequal ones the mean each team would have.
  const weight = (team: number) =>
    equalTeams ? (totals[team] ?? 0) : (totals[team] ?? 0) / (teamSizes[team] ?? 1);
  const teams = new Array<number>(sizes.length).fill(0);
  const order = sizes
    .map((size, index) => ({ size, sum: sums[index] ?? 0, index }))
    .sort((a, b) => b.size - a.size || b.sum - a.sum || a.index - b.index);
  for (const group of order) {
    let chosen = -1;
    for (let team = 0; team < teamCount; team++) {
      if ((free[team] ?? 0) < group.size) continue;
      if (chosen < 0 || weight(team) < weight(chosen)) chosen = team;
    }
    if (chosen < 0) return null;
    free[chosen] = (free[chosen] ?? 0) - group.size;
    totals[chosen] = (totals[chosen] ?? 0) + group.sum;
    teams[group.index] = chosen;
  }
  return teams;
}
