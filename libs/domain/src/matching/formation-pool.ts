/**
 * A matching pass's pools (built from formation-screen.ts's groups): each group's figures
 * precomputed, indexed by region and RTT ceiling, so a search reads only who could join (see
 * match-formation.ts).
 */
import {
  distanceRules,
  maxDistanceAt,
  numericAttribute,
  type DistanceRule,
} from './attribute-rules';
import { wideningStepAt, type ModeRules, type WideningStep } from './mode-rules';
import { pairChoices, pairRules, pairValues, type PairChoice, type PairRule } from './pair-rules';
import { RegionBucket, type BucketMember } from './region-bucket';
import { roleRuleOf, rolesOf, slotsOf } from './role-slots';
import { compareText } from './unmatched-reason';
import type { MatchCandidate } from './match-candidate';

/**
 * A group that passed screening (a solo ticket, or a whole party), with what the pass reads from
 * it precomputed. A group is matched whole, onto one team, or not at all.
 */
export interface Entry {
  /** The group's oldest ticket: its age is the group's. */
  readonly candidate: MatchCandidate;
  /** `candidate.enqueuedAt` in ms, read once: age order compares it for every pair it sorts. */
  readonly time: number;
  /** Every ticket of the group, oldest first (the solo ticket alone for a solo). */
  readonly members: readonly MatchCandidate[];
  /** The members' mean rating: what the rating window compares. */
  readonly rating: number;
  readonly pool: ModePool;
  readonly step: WideningStep;
  readonly waitedMs: number;
  /** Age order within its mode: 0 is the oldest (enqueuedAt, then ticketId). */
  readonly rank: number;
  /** members.length: what the buckets count. */
  readonly players: number;
  /** Per distance rule of the pool: this ticket's value (NaN: none)... */
  readonly distanceValues: Float64Array;
  /** ...and the largest distance its wait accepts, when it anchors. */
  readonly maxDistances: Float64Array;
  /** Per pair rule of the pool (pair-rules.ts): what this group holds (its oldest ticket's)... */
  readonly pairValues: readonly ReadonlySet<string>[];
  /** ...and the choices its search tries when it anchors (one, [], without pair rules). */
  readonly pairChoices: readonly PairChoice[];
  /** Players no member may share a match with (block lists); null when there are none. */
  readonly blocked: ReadonlySet<string> | null;
  /** Players some member would rather not meet (avoid lists); null when there are none. */
  readonly avoided: ReadonlySet<string> | null;
  /** Per member, the roles it plays under the mode's role rule (none without one)... */
  readonly roles: readonly (readonly string[])[];
  /** ...and how many members play one of the rule's slot roles: what the role buckets count. */
  readonly slotPlayers: number;
}

/** Candidates of one mode that play together: one ticket, or all tickets of one party ticket. */
export interface Group {
  readonly members: MatchCandidate[];
  readonly regions: string[];
  /** The oldest member's enqueuedAt in ms. */
  readonly time: number;
}

export interface ModePool {
  readonly rules: ModeRules;
  /** Every region some candidate of the mode measured, in name order. */
  readonly regions: readonly string[];
  /** The distinct RTT ceilings of the mode's steps, ascending. */
  readonly ceilings: readonly number[];
  /** buckets[region][ceiling]: who measured that region within that ceiling. */
  readonly buckets: readonly (readonly RegionBucket[])[];
  /**
   * Likewise for the groups with a member who plays a slot role of the mode's role rule (counting
   * those members), so a search that needs such players can skip the rest; [] without the rule.
   */
  readonly roleBuckets: readonly (readonly RegionBucket[])[];
  /** One team's slots under the mode's role rule ([] without one), worked out once a pass. */
  readonly slots: readonly string[];
  readonly entries: Entry[];
  /**
   * Per entry (by rank) and region (pool.regions order), at rank × regions + region: the worst
   * member's RTT, NaN where any has not measured it (read through {@link rttOf})...
   */
  readonly rtt: Float64Array;
  /** ...and the sum of the members' RTT ({@link rttSumOf}). One array per pool, not per entry. */
  readonly rttSum: Float64Array;
  /**
   * The values of the mode's equal rules every ticket here shares (equalRuleKey; '' without equal
   * rules): a mode is split into one pool per such key, so tickets that must not meet never do.
   */
  readonly partition: string;
  readonly distanceRules: readonly DistanceRule[];
  /** Intersect rules and equal rules that become optional, checked pair-wise in a search. */
  readonly pairRules: readonly PairRule[];
  /** Whether any group here has a block list: searches check them only then. */
  hasBlocks: boolean;
  /** Whether any group here has an avoid list: a search first keeps avoided pairs apart only then. */
  hasAvoids: boolean;
  /** Every pool of the mode, this one included: an explanation looks at the others. */
  readonly siblings: readonly ModePool[];
  /**
   * What the pass has settled for each entry, by rank: {@link OPEN}, {@link MATCHED}, or
   * {@link RETIRED}. Flags by rank rather than sets of entries: a pass settles most of them.
   */
  readonly settled: Uint8Array;
}

/** Not settled yet: may still anchor or join a match. */
export const OPEN = 0;
export const MATCHED = 1;
/** Its player was matched through a ticket in another mode. */
export const RETIRED = 2;

export function buildPool(
  rules: ModeRules,
  accepted: readonly Group[],
  now: Date,
  partition: string,
  siblings: readonly ModePool[],
): ModePool {
  const measuredSomewhere = new Set<string>();
  for (const group of accepted) for (const region of group.regions) measuredSomewhere.add(region);
  const regions = [...measuredSomewhere].sort(compareText);
  const regionIndex = new Map(regions.map((region, index) => [region, index]));
  const ceilings = [...new Set(rules.widening.map((step) => step.maxRttMs))].sort((a, b) => a - b);
  const entries: Entry[] = [];
  const buckets: RegionBucket[][] = [];
  const roleBuckets: RegionBucket[][] = [];
  const roleRule = roleRuleOf(rules);
  const slots = roleRule ? slotsOf(roleRule) : [];
  const slotRoles = new Set(slots);
  const nowMs = now.getTime();
  const distance = distanceRules(rules.attributeRules);
  const pair = pairRules(rules.attributeRules);
  const rttOfPool = new Float64Array(accepted.length * regions.length).fill(Number.NaN);
  const rttSumOfPool = new Float64Array(accepted.length * regions.length).fill(Number.NaN);
  const pool: ModePool = {
    rules,
    regions,
    ceilings,
    buckets,
    roleBuckets,
    slots,
    entries,
    rtt: rttOfPool,
    rttSum: rttSumOfPool,
    partition,
    distanceRules: distance,
    pairRules: pair,
    hasBlocks: false,
    hasAvoids: false,
    siblings,
    settled: new Uint8Array(accepted.length),
  };
  accepted.forEach(({ members, regions: measured, time }, rank) => {
    // The group's oldest ticket: its age, and its attributes (a party's members share them).
    const candidate = members[0] as MatchCandidate;
    for (const region of measured) {
      const index = rank * regions.length + (regionIndex.get(region) ?? 0);
      let worst = 0;
      let sum = 0;
      for (const member of members) {
        const ms = member.predictedRtt[region] ?? Number.NaN;
        worst = Math.max(worst, ms);
        sum += ms;
      }
      rttOfPool[index] = worst;
      rttSumOfPool[index] = sum;
    }
    const rating = members.reduce((total, member) => total + member.rating, 0) / members.length;
    // A ticket stamped ahead of `now` (another replica's clock) has simply not waited yet.
    const waitedMs = Math.max(0, nowMs - time);
    // Without distance rules every entry shares one empty array: nothing reads or writes it.
    const distanceValues = distance.length === 0 ? NO_DISTANCES : new Float64Array(distance.length);
    const maxDistances = distance.length === 0 ? NO_DISTANCES : new Float64Array(distance.length);
    distance.forEach((rule, index) => {
      distanceValues[index] = numericAttribute(candidate.attributes, rule.attribute);
      maxDistances[index] = maxDistanceAt(rule, waitedMs);
    });
    const values =
      pair.length === 0
        ? NO_PAIR_VALUES
        : pair.map((rule) => pairValues(rule, candidate.attributes));
    const roles = roleRule ? members.map((member) => rolesOf(member, roleRule)) : NO_ROLES;
    entries.push({
      candidate,
      time,
      members,
      rating,
      pool,
      step: wideningStepAt(rules, waitedMs),
      waitedMs,
      rank,
      players: members.length,
      distanceValues,
      maxDistances,
      pairValues: values,
      pairChoices: pair.length === 0 ? ONE_EMPTY_CHOICE : pairChoices(pair, values, waitedMs),
      blocked: playersListed(members, 'blockedPlayerIds'),
      avoided: playersListed(members, 'avoidedPlayerIds'),
      roles,
      slotPlayers: roleRule ? slotPlayersOf(roles, slotRoles) : 0,
    });
    const entry = entries[entries.length - 1];
    if (entry?.blocked) pool.hasBlocks = true;
    if (entry?.avoided) pool.hasAvoids = true;
  });
  // Sorted once here; each bucket takes its members in this order as they are, without a sort.
  const byRating = entries.slice().sort((a, b) => a.rating - b.rating || a.rank - b.rank);
  buckets.push(...bucketsOf(pool, byRating));
  if (roleRule) {
    const playing = byRating.filter((entry) => entry.slotPlayers > 0);
    const counted = playing.map(({ rank, rating, slotPlayers }) => ({
      rank,
      rating,
      players: slotPlayers,
      pool,
    }));
    roleBuckets.push(...bucketsOf(pool, counted));
  }
  return pool;
}

/** Per region and ceiling, a bucket of the `members` (in rating order) who measured it within. */
function bucketsOf(
  pool: ModePool,
  members: readonly (BucketMember & Pick<Entry, 'pool' | 'rank'>)[],
): RegionBucket[][] {
  const { regions, ceilings, entries } = pool;
  const within = regions.map(() => ceilings.map((): BucketMember[] => []));
  for (const member of members) {
    for (let region = 0; region < regions.length; region++) {
      const rtt = rttOf(member, region);
      for (let index = 0; index < ceilings.length; index++) {
        if (rtt <= (ceilings[index] ?? Number.NaN)) within[region]?.[index]?.push(member);
      }
    }
  }
  return within.map((perCeiling) =>
    perCeiling.map((sorted) => RegionBucket.inRatingOrder(sorted, entries.length)),
  );
}

/** The worst member's RTT of `entry` to the pool's `region` (an index), NaN where any has not measured it. */
export function rttOf(entry: Pick<Entry, 'pool' | 'rank'>, region: number): number {
  return entry.pool.rtt[entry.rank * entry.pool.regions.length + region] ?? Number.NaN;
}

/** The sum of `entry`'s members' RTT to `region` (NaN likewise). */
export function rttSumOf(entry: Entry, region: number): number {
  return entry.pool.rttSum[entry.rank * entry.pool.regions.length + region] ?? Number.NaN;
}

/** Switches `entry` on or off in every bucket of its pool, or in those of one `ceiling` only. */
export function setActive(entry: Entry, active: boolean, ceiling?: number): void {
  setActiveIn(entry.pool.buckets, entry.rank, active, ceiling);
  if (entry.slotPlayers > 0) setActiveIn(entry.pool.roleBuckets, entry.rank, active, ceiling);
}

function setActiveIn(
  buckets: ModePool['buckets'],
  rank: number,
  active: boolean,
  ceiling: number | undefined,
): void {
  for (const ofRegion of buckets) {
    if (ceiling === undefined) for (const bucket of ofRegion) bucket.setActive(rank, active);
    else ofRegion[ceiling]?.setActive(rank, active);
  }
}

export function entryAt(pool: ModePool, rank: number): Entry {
  const entry = pool.entries[rank];
  if (!entry) throw new Error(`no candidate at rank ${rank} in mode ${pool.rules.mode}`);
  return entry;
}

/** Age order across pools: enqueuedAt, then ticketId (within a pool, the same as rank order). */
export function byAge(a: Entry, b: Entry): number {
  return a.time - b.time || compareText(a.candidate.ticketId, b.candidate.ticketId);
}

const NO_DISTANCES = new Float64Array(0);
const NO_PAIR_VALUES: readonly ReadonlySet<string>[] = Object.freeze([]);
const NO_ROLES: readonly (readonly string[])[] = Object.freeze([]);
const ONE_EMPTY_CHOICE: readonly PairChoice[] = Object.freeze([Object.freeze([])]);

function playersListed(
  members: readonly MatchCandidate[],
  list: 'blockedPlayerIds' | 'avoidedPlayerIds',
): ReadonlySet<string> | null {
  let listed: Set<string> | null = null;
  for (const member of members) {
    const playerIds = member[list];
    if (playerIds) for (const playerId of playerIds) (listed ??= new Set()).add(playerId);
  }
  return listed;
}

/** How many members play one of `slotRoles`: what the role buckets count. */
function slotPlayersOf(
  roles: readonly (readonly string[])[],
  slotRoles: ReadonlySet<string>,
): number {
  let players = 0;
  for (const played of roles) if (played.some((role) => slotRoles.has(role))) players++;
  return players;
}
