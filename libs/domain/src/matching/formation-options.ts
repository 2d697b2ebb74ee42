/** The search an anchor runs: its best region's match, partners oldest first within its limits. */
import { withinAttributeDistance } from './attribute-rules';
import { matchShapesAt } from './match-size';
import { TeamPacking } from './party-teams';
import { type RegionBucket } from './region-bucket';
import { entryAt, rttOf, rttSumOf, setActive, type Entry, type ModePool } from './formation-pool';
import { meetsChoice, type PairChoice } from './pair-rules';
import { RolePacking, roleRuleAt } from './role-slots';

export interface Option {
  readonly region: number;
  /** Oldest first. */
  readonly members: readonly Entry[];
  readonly worst: number;
  readonly sum: number;
  /** A packing of `members` (same order) into teams that is known to fit. */
  readonly teams: readonly number[];
  /** Each team's size: the mode's, or fewer whole teams in a mode with fill steps. */
  readonly sizes: readonly number[];
}

/**
 * The match `anchor` should join, or null when no region can fill one. See formMatches for
 * which one and why it always exists when any region can fill.
 */
export function bestOption(anchor: Entry): Option | null {
  // Its searches read only the buckets of its ceiling: off there while they run (most find
  // nothing), off everywhere once it is matched.
  const ceiling = anchor.pool.ceilings.indexOf(anchor.step.maxRttMs);
  setActive(anchor, false, ceiling);
  // Avoid lists: first as if they were blocks; only when that fills no match, without them
  // (docs/decisions/2026-12-07-avoid-lists.md). Block lists hold in both searches.
  let chosen = anchor.pool.hasAvoids ? bestOptionOfAnyShape(anchor, ceiling, true) : null;
  chosen ??= bestOptionOfAnyShape(anchor, ceiling, false);
  setActive(anchor, !chosen, chosen ? undefined : ceiling);
  return chosen;
}

function bestOptionOfAnyShape(anchor: Entry, ceiling: number, avoids: boolean): Option | null {
  // The full match first; with fill steps, then one whole team fewer at a time down to the
  // anchor's minimum: the largest match that forms wins.
  for (const sizes of matchShapesAt(anchor.pool.rules, anchor.waitedMs)) {
    const chosen = bestOptionOfShape(anchor, ceiling, sizes, avoids);
    if (chosen) return chosen;
  }
  return null;
}

function bestOptionOfShape(
  anchor: Entry,
  ceiling: number,
  sizes: readonly number[],
  avoids: boolean,
): Option | null {
  const { pool } = anchor;
  const options: Option[] = [];
  // One search per value (combination) the match could share under the pair rules; without any, one.
  for (const choice of anchor.pairChoices) {
    const accept = partnerFilter(anchor, choice);
    pool.regions.forEach((_, region) => {
      const option = searchRegion(anchor, region, ceiling, sizes, accept, { avoids });
      if (option) options.push(option);
    });
  }
  let chosen: Option | null = null;
  for (const option of options) {
    // A set whose own best region is elsewhere would, moved there, pass over an older ticket.
    if (bestRegionOf(option.members, pool) !== option.region) continue;
    if (!chosen || compareOptions(option, chosen) < 0) chosen = option;
  }
  return chosen;
}

/** The match `anchor` would form in `region` taking the oldest partners `accept` admits, or null. */
function searchRegion(
  anchor: Entry,
  region: number,
  ceiling: number,
  sizes: readonly number[],
  accept: ((rank: number) => boolean) | undefined,
  {
    blocks: checkBlocks = anchor.pool.hasBlocks,
    avoids: checkAvoids = false,
    roles: checkRoles = true,
  } = {},
): Option | null {
  const { pool, step } = anchor;
  const needed = sizes.reduce((total, size) => total + size, 0) - anchor.members.length;
  if (!(rttOf(anchor, region) <= step.maxRttMs)) return null;
  const bucket = pool.buckets[region]?.[ceiling];
  if (!bucket) return null;
  const [lo, hi] = bucket.ratingRange(anchor.rating, step.ratingWindow);
  const available = bucket.count(lo, hi);
  if (available < needed) return null;
  // Oldest first, passing over a group that does not fit the room left (solos always fit).
  const packing = groupPacking(anchor, sizes, checkRoles);
  const anchorTeam = packing.add(anchor);
  if (anchorTeam < 0) return null;
  const teamOf = new Map<Entry, number>([[anchor, anchorTeam]]);
  const blocks =
    checkBlocks || checkAvoids ? new BlockCheck(anchor, checkBlocks, checkAvoids) : null;
  let missing = needed;
  const take = (rank: number) => {
    if (accept && !accept(rank)) return false;
    const entry = entryAt(pool, rank);
    const size = entry.members.length;
    if (size > missing || !packing.fits(entry)) return false;
    // Passed over like a party that does not fit: nobody shares a match with whom they blocked.
    if (blocks && !blocks.admit(entry)) return false;
    teamOf.set(entry, packing.add(entry));
    missing -= size;
    return true;
  };
  const roles = packing.roles;
  const roleBucket = roles && pool.roleBuckets[region]?.[ceiling];
  let partners: number[];
  if (roles && roleBucket) {
    const [roleLo, roleHi] = roleBucket.ratingRange(anchor.rating, step.ratingWindow);
    partners = bucket.takeOldestWhereNarrowing(
      lo,
      hi,
      { bucket: roleBucket, lo: roleLo, hi: roleHi },
      // Once every team's room is kept for its empty slots, only their players can join.
      () => roles.onlySlotRolesFit,
      take,
      // As below, and also once too few players of the slots' roles are left to fill them.
      () =>
        missing === 0 ||
        bucket.count(lo, hi) < missing ||
        roleBucket.count(roleLo, roleHi) < roles.openSlots,
    );
  } else {
    // Each visit switches one group of the window off, so the players left unvisited (what
    // bucket.count would say) are counted down here rather than read from the tree each step.
    let unvisited = available;
    partners = bucket.takeOldestWhere(
      lo,
      hi,
      (rank) => {
        unvisited -= entryAt(pool, rank).players;
        return take(rank);
      },
      // Done, or too few players left unvisited to fill it: stop rather than scan the window.
      () => missing === 0 || unvisited < missing,
    );
  }
  if (missing > 0) return null;
  const members = [anchor, ...partners.map((rank) => entryAt(pool, rank))];
  // Oldest first: within one pool, rank order is age order.
  members.sort((a, b) => a.rank - b.rank);
  const cost = regionCost(members, region);
  if (!cost) return null;
  const teams = members.map((m) => teamOf.get(m) ?? 0);
  return { region, members, worst: cost.worst, sum: cost.sum, teams, sizes };
}

interface GroupPacking {
  fits(entry: Entry): boolean;
  /** The entry's team, or -1 when it fits none. */
  add(entry: Entry): number;
  /** The role packing, when the anchor's role rule applies: what lets a search skip players. */
  readonly roles?: RolePacking;
}

/** Teams by size (TeamPacking), or by size and role slots when the anchor's role rule applies. */
function groupPacking(anchor: Entry, sizes: readonly number[], checkRoles: boolean): GroupPacking {
  const rule = checkRoles ? roleRuleAt(anchor.pool.rules, anchor.waitedMs) : undefined;
  if (!rule) {
    const teams = new TeamPacking(sizes);
    return {
      fits: (entry) => teams.fits(entry.members.length),
      add: (entry) => (teams.fits(entry.members.length) ? teams.add(entry.members.length) : -1),
    };
  }
  const roles = new RolePacking(sizes, anchor.pool.slots);
  return {
    fits: (entry) => roles.fits(entry.roles),
    add: (entry) => roles.add(entry.roles),
    roles,
  };
}

/**
 * Whether `entry` could anchor a match in the pool as it is now if the block lists (`blocks`)
 * or the role rule (`roles`) did not count: what tells an explanation that those, not a lack of
 * players, keep it waiting. Leaves the pool as it found it (the entry is never its own partner).
 */
export function fillsIgnoring(
  entry: Entry,
  ignore: { blocks?: boolean; roles?: boolean },
): boolean {
  const { pool, step } = entry;
  const ceiling = pool.ceilings.indexOf(step.maxRttMs);
  return matchShapesAt(pool.rules, entry.waitedMs).some((sizes) =>
    entry.pairChoices.some((choice) => {
      const accept = partnerFilter(entry, choice);
      const others = (rank: number) => rank !== entry.rank && (accept ? accept(rank) : true);
      return pool.regions.some(
        (_, region) =>
          searchRegion(entry, region, ceiling, sizes, others, {
            blocks: ignore.blocks ? false : pool.hasBlocks,
            roles: !ignore.roles,
          }) !== null,
      );
    }),
  );
}

/**
 * The players of a match being formed and whom they must not meet, both directions checked per
 * group: their blocks, and their avoids too while those are kept apart. A match is a handful of
 * players and most list nobody: a list, and a set made on first need.
 */
class BlockCheck {
  private readonly players: string[] = [];
  private kept: Set<string> | null = null;

  constructor(
    anchor: Entry,
    private readonly blocks: boolean,
    private readonly avoids: boolean,
  ) {
    this.add(anchor);
  }

  /** Takes `entry` into the match unless it keeps apart from, or is kept from, someone in it. */
  admit(entry: Entry): boolean {
    const kept = this.kept;
    if (kept && entry.members.some((member) => kept.has(member.playerId))) return false;
    const blocked = this.blocks ? entry.blocked : null;
    const avoided = this.avoids ? entry.avoided : null;
    if (blocked || avoided) {
      for (const playerId of this.players) {
        if (blocked?.has(playerId) || avoided?.has(playerId)) return false;
      }
    }
    this.add(entry);
    return true;
  }

  private add(entry: Entry): void {
    for (const member of entry.members) this.players.push(member.playerId);
    const lists = [this.blocks ? entry.blocked : null, this.avoids ? entry.avoided : null];
    for (const listed of lists) {
      if (!listed) continue;
      const kept = (this.kept ??= new Set());
      for (const playerId of listed) kept.add(playerId);
    }
  }
}

/** Worst and sum of the members' RTT to `region` (summed oldest first, for determinism), or null. */
export function regionCost(
  members: readonly Entry[],
  region: number,
): { worst: number; sum: number } | null {
  let worst = 0;
  let sum = 0;
  for (const member of members) {
    const rtt = rttOf(member, region);
    if (Number.isNaN(rtt)) return null;
    worst = Math.max(worst, rtt);
    sum += rttSumOf(member, region);
  }
  return { worst, sum };
}

/** The region compareOptions ranks first for `members` (-1 if none): a tie keeps the earlier. */
function bestRegionOf(members: readonly Entry[], pool: ModePool): number {
  let best = -1;
  let bestWorst = 0;
  let bestSum = 0;
  for (let region = 0; region < pool.regions.length; region++) {
    const cost = regionCost(members, region);
    if (!cost) continue;
    const better = cost.worst < bestWorst || (cost.worst === bestWorst && cost.sum < bestSum);
    if (best < 0 || better) {
      best = region;
      bestWorst = cost.worst;
      bestSum = cost.sum;
    }
  }
  return best;
}

/** Lower worst RTT, then lower sum, then region name (pool.regions is in name order). */
function compareOptions(a: Option, b: Option): number {
  return a.worst - b.worst || a.sum - b.sum || a.region - b.region;
}

/** Which rules (indexes into the pool's distance and pair rules) refused a partner. */
export interface Refusals {
  readonly distance: Set<number>;
  readonly pair: Set<number>;
}

/**
 * The attribute rules' test of partners for a search anchored by `anchor` under `choice`, by age
 * rank in its pool: within its distance rules, holding the choice's value of each pair rule in
 * force. Undefined when nothing is checked. Records the index of each rule that refused someone.
 */
export function partnerFilter(
  anchor: Entry,
  choice: PairChoice,
  refused?: Refusals,
): ((rank: number) => boolean) | undefined {
  const count = anchor.pool.distanceRules.length;
  const checksPairs = choice.some((value) => value !== null);
  if (count === 0 && !checksPairs) return undefined;
  return (rank) => {
    const member = entryAt(anchor.pool, rank);
    for (let index = 0; index < count; index++) {
      const within = withinAttributeDistance(
        member.distanceValues[index] ?? Number.NaN,
        anchor.distanceValues[index] ?? Number.NaN,
        anchor.maxDistances[index] ?? 0,
      );
      if (!within) {
        refused?.distance.add(index);
        return false;
      }
    }
    const failed = checksPairs ? meetsChoice(choice, member.pairValues) : -1;
    if (failed >= 0) refused?.pair.add(failed);
    return failed < 0;
  };
}

/** Players of the oldest groups in slots [lo, hi) that `accept` admits, counted up to `needed`. */
export function playersAccepted(
  bucket: RegionBucket,
  lo: number,
  hi: number,
  needed: number,
  accept: (rank: number) => boolean,
  pool: ModePool,
): number {
  let players = 0;
  bucket.takeOldestWhere(
    lo,
    hi,
    (rank) => {
      if (!accept(rank)) return false;
      players += entryAt(pool, rank).members.length;
      return true;
    },
    () => players >= needed,
  );
  return players;
}
