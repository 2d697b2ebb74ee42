/**
 * A matching pass's pools: candidates screened, grouped into parties and indexed by region and
 * RTT ceiling, so a search reads only who could join (see match-formation.ts).
 */
import { measuredRegions } from '../candidate/candidate.policy';
import {
  distanceRules,
  equalRuleKey,
  equalRules,
  maxDistanceAt,
  numericAttribute,
  type DistanceRule,
} from './attribute-rules';
import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { isLabel, isUuid, isValidDate } from '../shared/value.guards';
import { wideningStepAt, type ModeRules, type WideningStep } from './mode-rules';
import { RegionBucket, type BucketMember } from './region-bucket';
import {
  compareText,
  duplicateTicket,
  invalidCandidate,
  noRegion,
  partyIncomplete,
  partyTooLarge,
  unknownMode,
  type UnmatchedReason,
} from './unmatched-reason';
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
  /** Worst member's RTT per region of the pool (pool.regions order), NaN where any has not measured. */
  readonly rtt: Float64Array;
  /** Sum of the members' RTT per region (NaN likewise). */
  readonly rttSum: Float64Array;
  /** Per distance rule of the pool: this ticket's value (NaN: none)... */
  readonly distanceValues: Float64Array;
  /** ...and the largest distance its wait accepts, when it anchors. */
  readonly maxDistances: Float64Array;
}

/** Candidates of one mode that play together: one ticket, or all tickets of one party ticket. */
export interface Group {
  readonly members: MatchCandidate[];
  readonly regions: string[];
}

export interface ModePool {
  readonly rules: ModeRules;
  /** Every region some candidate of the mode measured, in name order. */
  readonly regions: readonly string[];
  /** The distinct RTT ceilings of the mode's steps, ascending. */
  readonly ceilings: readonly number[];
  /** buckets[region][ceiling]: who measured that region within that ceiling. */
  readonly buckets: readonly (readonly RegionBucket[])[];
  readonly entries: Entry[];
  /**
   * The values of the mode's equal rules every ticket here shares (equalRuleKey; '' without equal
   * rules): a mode is split into one pool per such key, so tickets that must not meet never do.
   */
  readonly partition: string;
  readonly distanceRules: readonly DistanceRule[];
  /** Every pool of the mode, this one included: an explanation looks at the others. */
  readonly siblings: readonly ModePool[];
}

/** A candidate that passed screening, with the regions it measured and its enqueue time in ms. */
interface Screened {
  readonly candidate: MatchCandidate;
  readonly regions: string[];
  readonly time: number;
}

/**
 * Splits candidates into per-mode pools and rejections. Every candidate lands in exactly one;
 * only a missing or repeated ticket id throws, since it could not even be reported on.
 */
export function screen(
  candidates: readonly MatchCandidate[],
  rules: readonly ModeRules[],
  now: Date,
): {
  pools: ModePool[];
  rejected: { time: number; ticketId: string; reason: UnmatchedReason }[];
  /** Kept tickets of players who have one in more than one mode (usually none). */
  inSeveralModes: ReadonlySet<MatchCandidate>;
} {
  const rulesByMode = new Map(rules.map((rule) => [rule.mode, rule]));
  const ticketIds = new Set<string>();
  const rejected: { time: number; ticketId: string; reason: UnmatchedReason }[] = [];
  const accepted = new Map<string, Screened[]>();
  for (const candidate of candidates) {
    const ticketId: unknown = candidate.ticketId;
    if (typeof ticketId !== 'string' || ticketId.length === 0) {
      throw new DomainError(
        DomainErrorCode.INVALID_ARGUMENT,
        'every candidate needs a ticketId string',
      );
    }
    if (ticketIds.has(ticketId)) {
      throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, `ticket ${ticketId} appears twice`, {
        ticketId,
      });
    }
    ticketIds.add(ticketId);
    const time = isValidDate(candidate.enqueuedAt)
      ? candidate.enqueuedAt.getTime()
      : Number.POSITIVE_INFINITY;
    const reject = (reason: UnmatchedReason) => rejected.push({ time, ticketId, reason });
    const problems = candidateProblems(candidate);
    if (problems.length > 0) {
      reject(invalidCandidate(problems));
      continue;
    }
    const modeRules = rulesByMode.get(candidate.mode);
    if (!modeRules) {
      reject(unknownMode(candidate.mode));
      continue;
    }
    // A region name the match could not be created with is no region at all.
    const regions = measuredRegions(candidate.predictedRtt).filter(isLabel);
    if (regions.length === 0) {
      reject(noRegion());
      continue;
    }
    const list = accepted.get(candidate.mode);
    if (list) list.push({ candidate, regions, time });
    else accepted.set(candidate.mode, [{ candidate, regions, time }]);
  }

  const pools: ModePool[] = [];
  // One map for every mode, which are screened one after another: a player's kept ticket in the
  // mode being screened (a second one is a duplicate), or in an earlier mode (several modes).
  const keptTicketOf = new Map<string, MatchCandidate>();
  const inSeveralModes = new Set<MatchCandidate>();
  for (const modeRules of [...rules].sort((a, b) => compareText(a.mode, b.mode))) {
    const list = (accepted.get(modeRules.mode) ?? []).sort(
      (a, b) => a.time - b.time || compareText(a.candidate.ticketId, b.candidate.ticketId),
    );
    // One ticket per player and mode: the oldest is the one that has waited.
    const kept = list.filter(({ candidate, time }) => {
      const older = keptTicketOf.get(candidate.playerId);
      if (older === undefined || older.mode !== modeRules.mode) {
        if (older !== undefined) inSeveralModes.add(older).add(candidate);
        keptTicketOf.set(candidate.playerId, candidate);
        return true;
      }
      rejected.push({
        time,
        ticketId: candidate.ticketId,
        reason: duplicateTicket(candidate.playerId, older.ticketId, modeRules.mode),
      });
      return false;
    });
    // Equal rules split the mode: only tickets with the same values may meet (attribute-rules.ts).
    const equal = equalRules(modeRules.attributeRules);
    const partitions = new Map<string, typeof kept>();
    for (const item of kept) {
      const key = equalRuleKey(equal, item.candidate.attributes);
      const partition = partitions.get(key);
      if (partition) partition.push(item);
      else partitions.set(key, [item]);
    }
    const siblings: ModePool[] = [];
    for (const key of [...partitions.keys()].sort(compareText)) {
      const groups = groupParties(partitions.get(key) ?? [], modeRules, rejected);
      const pool = buildPool(modeRules, groups, now, key, siblings);
      siblings.push(pool);
      pools.push(pool);
    }
  }
  return { pools, rejected, inSeveralModes };
}

/**
 * Candidates (age order) into groups: each solo ticket alone, each party ticket's members
 * together, in the order of each group's oldest ticket. A party missing members, larger than a
 * team, or whose members disagree on its size is rejected whole; a party with no region every
 * member measured is kept (and explained as such).
 */
function groupParties(
  candidates: readonly Screened[],
  rules: ModeRules,
  rejected: { time: number; ticketId: string; reason: UnmatchedReason }[],
): Group[] {
  const groups: Group[] = [];
  const parties = new Map<string, Group>();
  for (const { candidate, regions } of candidates) {
    const partyId = candidate.party?.id;
    if (partyId === undefined) {
      groups.push({ members: [candidate], regions });
      continue;
    }
    const party = parties.get(partyId);
    if (party) {
      party.members.push(candidate);
      const measured = new Set(regions);
      party.regions.splice(
        0,
        party.regions.length,
        ...party.regions.filter((r) => measured.has(r)),
      );
    } else {
      const group = { members: [candidate], regions: [...regions] };
      parties.set(partyId, group);
      groups.push(group);
    }
  }
  return groups.filter((group) => {
    const first = group.members[0];
    const partyId = first?.party?.id;
    if (!first?.party || partyId === undefined) return true;
    const size = first.party.size;
    let reason: UnmatchedReason | null = null;
    if (group.members.some((member) => member.party?.size !== size)) {
      reason = invalidCandidate([`the members of party ${partyId} disagree on its size`]);
    } else if (size > rules.teamSize) {
      reason = partyTooLarge(partyId, size, rules.teamSize);
    } else if (group.members.length !== size) {
      reason = partyIncomplete(partyId, size, group.members.length);
    }
    if (reason === null) return true;
    for (const member of group.members) {
      rejected.push({ time: member.enqueuedAt.getTime(), ticketId: member.ticketId, reason });
    }
    return false;
  });
}

function candidateProblems(candidate: MatchCandidate): string[] {
  const problems: string[] = [];
  if (!isUuid(candidate.ticketId)) problems.push('ticketId must be a canonical lowercase uuid');
  if (!isUuid(candidate.playerId)) problems.push('playerId must be a canonical lowercase uuid');
  if (typeof candidate.mode !== 'string') problems.push('mode must be a string');
  if (typeof candidate.rating !== 'number' || !Number.isFinite(candidate.rating)) {
    problems.push('rating must be a finite number');
  }
  const { ratingSigma } = candidate;
  if (ratingSigma !== undefined && !(Number.isFinite(ratingSigma) && ratingSigma > 0)) {
    problems.push('ratingSigma must be a finite number > 0 when present');
  }
  if (!isValidDate(candidate.enqueuedAt)) problems.push('enqueuedAt must be a valid Date');
  if (candidate.party !== undefined) {
    const party: unknown = candidate.party;
    const { id, size } = (typeof party === 'object' && party !== null ? party : {}) as {
      id?: unknown;
      size?: unknown;
    };
    if (typeof id !== 'string' || !isUuid(id)) {
      problems.push('party.id must be a canonical lowercase uuid');
    }
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1) {
      problems.push('party.size must be an integer >= 1');
    }
  }
  return problems;
}

function buildPool(
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
  const nowMs = now.getTime();
  const distance = distanceRules(rules.attributeRules);
  const pool: ModePool = {
    rules,
    regions,
    ceilings,
    buckets,
    entries,
    partition,
    distanceRules: distance,
    siblings,
  };
  accepted.forEach(({ members, regions: measured }, rank) => {
    // The group's oldest ticket: its age, and its attributes (a party's members share them).
    const candidate = members[0] as MatchCandidate;
    const rtt = new Float64Array(regions.length).fill(Number.NaN);
    const rttSum = new Float64Array(regions.length).fill(Number.NaN);
    for (const region of measured) {
      const index = regionIndex.get(region) ?? 0;
      let worst = 0;
      let sum = 0;
      for (const member of members) {
        const ms = member.predictedRtt[region] ?? Number.NaN;
        worst = Math.max(worst, ms);
        sum += ms;
      }
      rtt[index] = worst;
      rttSum[index] = sum;
    }
    const rating = members.reduce((total, member) => total + member.rating, 0) / members.length;
    // A ticket stamped ahead of `now` (another replica's clock) has simply not waited yet.
    const waitedMs = Math.max(0, nowMs - candidate.enqueuedAt.getTime());
    // Without distance rules every entry shares one empty array: nothing reads or writes it.
    const distanceValues = distance.length === 0 ? NO_DISTANCES : new Float64Array(distance.length);
    const maxDistances = distance.length === 0 ? NO_DISTANCES : new Float64Array(distance.length);
    distance.forEach((rule, index) => {
      distanceValues[index] = numericAttribute(candidate.attributes, rule.attribute);
      maxDistances[index] = maxDistanceAt(rule, waitedMs);
    });
    entries.push({
      candidate,
      time: candidate.enqueuedAt.getTime(),
      members,
      rating,
      pool,
      step: wideningStepAt(rules, waitedMs),
      waitedMs,
      rank,
      rtt,
      rttSum,
      distanceValues,
      maxDistances,
    });
  });
  // Sorted once here; each bucket takes its members in this order as they are, without a sort.
  const byRating = entries
    .map(({ rank, rating, members, rtt }) => ({ rank, rating, players: members.length, rtt }))
    .sort((a, b) => a.rating - b.rating || a.rank - b.rank);
  const members = regions.map(() => ceilings.map((): BucketMember[] => []));
  for (const member of byRating) {
    for (let region = 0; region < regions.length; region++) {
      const rtt = member.rtt[region] ?? Number.NaN;
      for (let index = 0; index < ceilings.length; index++) {
        if (rtt <= (ceilings[index] ?? Number.NaN)) members[region]?.[index]?.push(member);
      }
    }
  }
  for (const perCeiling of members) {
    buckets.push(perCeiling.map((sorted) => RegionBucket.inRatingOrder(sorted, entries.length)));
  }
  return pool;
}

export function setActive(entry: Entry, active: boolean): void {
  for (const perCeiling of entry.pool.buckets) {
    for (const bucket of perCeiling) bucket.setActive(entry.rank, active);
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
