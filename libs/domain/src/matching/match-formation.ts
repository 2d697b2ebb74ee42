import { measuredRegions } from '../candidate/candidate.policy';
import {
  attributeValueOf,
  distanceRules,
  equalRuleKey,
  equalRules,
  maxDistanceAt,
  nextDistanceWideningInMs,
  numericAttribute,
  withinAttributeDistance,
  type DistanceRule,
  type TicketAttributes,
} from './attribute-rules';
import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { assertNow, isLabel, isUuid, isValidDate } from '../shared/value.guards';
import {
  assertModeRules,
  nextWideningInMs,
  playersPerMatch,
  wideningStepAt,
  type ModeRules,
  type WideningStep,
} from './mode-rules';
import { balanceGroups, TeamPacking } from './party-teams';
import { RegionBucket } from './region-bucket';
import { balanceSkillOf } from '../rating/skill-rating';
import {
  attributeMismatch,
  compareText,
  duplicateTicket,
  invalidCandidate,
  noRegion,
  noRegionWithinLimit,
  notEnoughPlayers,
  partyIncomplete,
  partyTooLarge,
  playerMatched,
  unknownMode,
  type RegionShortfall,
  type UnmatchedReason,
  type UnmatchedTicket,
} from './unmatched-reason';

/** A searching ticket as the matcher sees it (see validCandidate for which tickets qualify). */
export interface MatchCandidate {
  readonly ticketId: string;
  readonly playerId: string;
  readonly mode: string;
  readonly rating: number;
  /**
   * The uncertainty (openskill sigma) behind `rating`, for team balance; absent reads as known
   * exactly (balance on `rating` alone).
   */
  readonly ratingSigma?: number;
  /** ms per region; entries that are not finite numbers >= 0 count as not measured. */
  readonly predictedRtt: Readonly<Record<string, number>>;
  readonly enqueuedAt: Date;
  /** The ticket's attributes (attribute-rules.ts), read by the mode's attribute rules; none: {}. */
  readonly attributes?: TicketAttributes;
  /** Set when the ticket is one member's of a party ticket: the party plays whole or not at all. */
  readonly party?: CandidateParty;
}

/** The party ticket a candidate belongs to: every member's candidate names the same one. */
export interface CandidateParty {
  /** The party ticket's id (one per enqueue of the party), shared by its members' tickets. */
  readonly id: string;
  /** How many players the party ticket has; all of them must be candidates for any to match. */
  readonly size: number;
}

export interface ProposedParticipant {
  readonly ticketId: string;
  readonly playerId: string;
  /** 0-based team index. */
  readonly team: number;
  readonly rating: number;
  /** This participant's predicted RTT to the match's region. */
  readonly rttMs: number;
  /** The party ticket of a party member (see {@link PartyRoster}): its party is all here, on this team. */
  readonly partyId?: string;
}

export interface ProposedMatch {
  readonly mode: string;
  readonly region: string;
  /** In roster order (team, then player id), as createMatch stores it. */
  readonly participants: readonly ProposedParticipant[];
  readonly worstRttMs: number;
  readonly sumRttMs: number;
  /** The ticket the match was formed for, whose widening step set the limits below. */
  readonly anchorTicketId: string;
  readonly maxRttMs: number;
  readonly ratingWindow: number;
}

export interface MatchFormation {
  /** In the order they were formed: by their anchor's age, oldest first. */
  readonly matches: readonly ProposedMatch[];
  /** Every candidate in no match, oldest first, each with why. */
  readonly unmatched: readonly UnmatchedTicket[];
}

/** The signature studios implement to replace the matching policy (the matcher binds it to a token). */
export type MatchingFunction = typeof formMatches;

/**
 * A group that passed screening (a solo ticket, or a whole party), with what the pass reads from
 * it precomputed. A group is matched whole, onto one team, or not at all.
 */
interface Entry {
  /** The group's oldest ticket: its age is the group's. */
  readonly candidate: MatchCandidate;
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
interface Group {
  readonly members: MatchCandidate[];
  readonly regions: string[];
}

interface ModePool {
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

interface Option {
  readonly region: number;
  /** Oldest first. */
  readonly members: readonly Entry[];
  readonly worst: number;
  readonly sum: number;
  /** A packing of `members` (same order) into teams that is known to fit. */
  readonly teams: readonly number[];
}

/**
 * One matching pass over `candidates` at `now`: proposes matches and explains every ticket left
 * out. Pure and deterministic: the same candidates in any order give the same result.
 *
 * Oldest first: each ticket in age order (enqueuedAt, then ticketId), unless already matched,
 * anchors a search with the limits of its widening step, and the anchor's step governs the whole
 * match. That is what lets a long wait rescue a ticket: under "the stricter of the two" an outlier
 * could only ever be matched with other long waiters, who are matched away first, and starve.
 * Younger partners accept the anchor's wider limits; an older participant (one whose own search
 * found nothing) is within its own, since steps only widen.
 *
 * For each region the anchor measured within its ceiling, the candidate match is the anchor plus
 * the oldest compatible unmatched tickets there (measured the region within the ceiling, rating
 * within the window of the anchor's); only a candidate whose region is also the best one for its
 * own players (lowest worst RTT, then lowest sum, then name) may be chosen, and among those the
 * best by the same order wins. Such a candidate always exists when any region can fill: the
 * better region of a set can fill too, with a set at least as old member by member (and older
 * somewhere unless it is the same set), so following "better region" ends at one.
 *
 * Attribute rules (attribute-rules.ts) narrow who may meet: a mode's equal rules split it into one
 * pool per combination of values (so tickets that must not meet never share a search), and its
 * distance rules admit a partner only within the anchor's widened distance, checked as the oldest
 * partners are taken (the guarantees below then speak of tickets also within those rules).
 *
 * Parties: a party ticket's members form one group, which counts as its size everywhere a ticket
 * counts as one player, has its members' mean rating and its worst member's RTT per region, and
 * is matched whole onto one team or not at all: partners are taken oldest first and a group that
 * would not fit the room left (in players, or in any one team: {@link TeamPacking}) is passed
 * over for younger ones. A party whose members are not all candidates waits (PARTY_INCOMPLETE).
 * With solo tickets only, every group is one ticket and all of the below holds as stated.
 *
 * Guarantees, each tested as stated:
 * - Oldest first within the region: for every match, no ticket that was unmatched when the match
 *   was formed, is of its mode and of a player not in it, measured its region within its
 *   `maxRttMs` and has a rating within `ratingWindow` of the anchor's, is older than any of its
 *   participants other than the anchor.
 * - Region: the match's region is the best (worst RTT, then sum, then name) of all regions
 *   every participant measured.
 * - Turn order: matches come out in their anchors' age order, and a ticket older than an anchor
 *   had its own turn first.
 * - Nobody left matchable: no unmatched ticket could anchor a match among the unmatched tickets
 *   under its own limits (its search ran on a pool that has only shrunk since).
 */
export function formMatches(
  candidates: readonly MatchCandidate[],
  rules: readonly ModeRules[],
  now: Date,
): MatchFormation {
  assertNow(now);
  assertModeRules(rules);
  const { pools, rejected } = screen(candidates, rules, now);

  const matches: ProposedMatch[] = [];
  const matchedTicketOfPlayer = new Map<string, string>();
  const entriesOfPlayer = new Map<string, Entry[]>();
  for (const pool of pools) {
    for (const entry of pool.entries) {
      for (const member of entry.members) {
        const list = entriesOfPlayer.get(member.playerId);
        if (list) list.push(entry);
        else entriesOfPlayer.set(member.playerId, [entry]);
      }
    }
  }
  const inMatch = new Set<Entry>();

  // Anchors across modes in one age order, so a player queued in two modes is first matched
  // through the older ticket.
  const anchors = pools.flatMap((pool) => pool.entries).sort(byAge);
  for (const anchor of anchors) {
    if (anchor.members.some((member) => matchedTicketOfPlayer.has(member.playerId))) continue;
    const option = bestOption(anchor);
    if (!option) continue;
    matches.push(proposal(anchor, option));
    for (const group of option.members) {
      inMatch.add(group);
      for (const member of group.members) {
        matchedTicketOfPlayer.set(member.playerId, member.ticketId);
        for (const entry of entriesOfPlayer.get(member.playerId) ?? []) setActive(entry, false);
      }
    }
  }

  const unmatched: { time: number; ticketId: string; reason: UnmatchedReason }[] = [...rejected];
  for (const entry of anchors) {
    if (inMatch.has(entry)) continue;
    const reason = explain(entry);
    for (const { ticketId, playerId, enqueuedAt } of entry.members) {
      const matchedTicketId = matchedTicketOfPlayer.get(playerId);
      unmatched.push({
        time: enqueuedAt.getTime(),
        ticketId,
        reason: matchedTicketId === undefined ? reason : playerMatched(playerId, matchedTicketId),
      });
    }
  }
  unmatched.sort((a, b) => a.time - b.time || compareText(a.ticketId, b.ticketId));
  return Object.freeze({
    matches: Object.freeze(matches),
    unmatched: Object.freeze(
      unmatched.map(({ ticketId, reason }) => Object.freeze({ ticketId, reason })),
    ),
  });
}

/**
 * Splits candidates into per-mode pools and rejections. Every candidate lands in exactly one;
 * only a missing or repeated ticket id throws, since it could not even be reported on.
 */
function screen(
  candidates: readonly MatchCandidate[],
  rules: readonly ModeRules[],
  now: Date,
): {
  pools: ModePool[];
  rejected: { time: number; ticketId: string; reason: UnmatchedReason }[];
} {
  const rulesByMode = new Map(rules.map((rule) => [rule.mode, rule]));
  const ticketIds = new Set<string>();
  const rejected: { time: number; ticketId: string; reason: UnmatchedReason }[] = [];
  const accepted = new Map<string, { candidate: MatchCandidate; regions: string[] }[]>();
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
    if (list) list.push({ candidate, regions });
    else accepted.set(candidate.mode, [{ candidate, regions }]);
  }

  const pools: ModePool[] = [];
  for (const modeRules of [...rules].sort((a, b) => compareText(a.mode, b.mode))) {
    const list = (accepted.get(modeRules.mode) ?? []).sort((a, b) =>
      compareCandidates(a.candidate, b.candidate),
    );
    // One ticket per player and mode: the oldest is the one that has waited.
    const olderTicketOf = new Map<string, string>();
    const kept = list.filter(({ candidate }) => {
      const older = olderTicketOf.get(candidate.playerId);
      if (older === undefined) {
        olderTicketOf.set(candidate.playerId, candidate.ticketId);
        return true;
      }
      rejected.push({
        time: candidate.enqueuedAt.getTime(),
        ticketId: candidate.ticketId,
        reason: duplicateTicket(candidate.playerId, older, modeRules.mode),
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
  return { pools, rejected };
}

/**
 * Candidates (age order) into groups: each solo ticket alone, each party ticket's members
 * together, in the order of each group's oldest ticket. A party missing members, larger than a
 * team, or whose members disagree on its size is rejected whole; a party with no region every
 * member measured is kept (and explained as such).
 */
function groupParties(
  candidates: readonly { candidate: MatchCandidate; regions: string[] }[],
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
  const regions = [...new Set(accepted.flatMap((item) => item.regions))].sort(compareText);
  const regionIndex = new Map(regions.map((region, index) => [region, index]));
  const ceilings = [...new Set(rules.widening.map((step) => step.maxRttMs))].sort((a, b) => a - b);
  const entries: Entry[] = [];
  const buckets: RegionBucket[][] = [];
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
    const waitedMs = Math.max(0, now.getTime() - candidate.enqueuedAt.getTime());
    const distanceValues = new Float64Array(distance.length);
    const maxDistances = new Float64Array(distance.length);
    distance.forEach((rule, index) => {
      distanceValues[index] = numericAttribute(candidate.attributes, rule.attribute);
      maxDistances[index] = maxDistanceAt(rule, waitedMs);
    });
    entries.push({
      candidate,
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
  // Sorted once here, so each bucket's own sort runs over already ordered input (linear).
  const byRating = entries
    .map((entry) => ({
      entry,
      rank: entry.rank,
      rating: entry.rating,
      players: entry.members.length,
    }))
    .sort((a, b) => a.rating - b.rating || a.rank - b.rank);
  regions.forEach((_, region) => {
    buckets.push(
      ceilings.map(
        (ceiling) =>
          new RegionBucket(
            byRating.filter(({ entry }) => (entry.rtt[region] ?? Number.NaN) <= ceiling),
            entries.length,
          ),
      ),
    );
  });
  return pool;
}

/**
 * The match `anchor` should join, or null when no region can fill one. See formMatches for
 * which one and why it always exists when any region can fill.
 */
function bestOption(anchor: Entry): Option | null {
  const { pool, step } = anchor;
  const { teamSize, teamCount } = pool.rules;
  const needed = playersPerMatch(pool.rules) - anchor.members.length;
  const ceiling = pool.ceilings.indexOf(step.maxRttMs);
  const accept = distanceFilter(anchor);
  setActive(anchor, false);
  const options: Option[] = [];
  pool.regions.forEach((_, region) => {
    if (!((anchor.rtt[region] ?? Number.NaN) <= step.maxRttMs)) return;
    const bucket = pool.buckets[region]?.[ceiling];
    if (!bucket) return;
    const [lo, hi] = bucket.ratingRange(anchor.rating, step.ratingWindow);
    if (bucket.count(lo, hi) < needed) return;
    // Oldest first, passing over a group that does not fit the room left (solos always fit).
    const packing = new TeamPacking(teamSize, teamCount);
    const teamOf = new Map<Entry, number>([[anchor, packing.add(anchor.members.length)]]);
    let missing = needed;
    const partners = bucket.takeOldestWhere(
      lo,
      hi,
      (rank) => {
        if (accept && !accept(rank)) return false;
        const size = entryAt(pool, rank).members.length;
        if (size > missing || !packing.fits(size)) return false;
        teamOf.set(entryAt(pool, rank), packing.add(size));
        missing -= size;
        return true;
      },
      // Done, or too few players left unvisited to fill it: stop rather than scan the window.
      () => missing === 0 || bucket.count(lo, hi) < missing,
    );
    if (missing > 0) return;
    const members = [anchor, ...partners.map((rank) => entryAt(pool, rank))];
    members.sort(byAge);
    const cost = regionCost(members, region);
    if (cost) {
      options.push({ region, members, ...cost, teams: members.map((m) => teamOf.get(m) ?? 0) });
    }
  });
  let chosen: Option | null = null;
  for (const option of options) {
    // A set whose own best region is elsewhere would, moved there, pass over an older ticket.
    if (bestRegionOf(option.members, pool) !== option.region) continue;
    if (!chosen || compareOptions(option, chosen) < 0) chosen = option;
  }
  if (!chosen) setActive(anchor, true);
  return chosen;
}

/** Worst and sum of the members' RTT to `region` (summed oldest first, for determinism), or null. */
function regionCost(
  members: readonly Entry[],
  region: number,
): { worst: number; sum: number } | null {
  let worst = 0;
  let sum = 0;
  for (const member of members) {
    const rtt = member.rtt[region] ?? Number.NaN;
    if (Number.isNaN(rtt)) return null;
    worst = Math.max(worst, rtt);
    sum += member.rttSum[region] ?? Number.NaN;
  }
  return { worst, sum };
}

function bestRegionOf(members: readonly Entry[], pool: ModePool): number {
  let best: Option | null = null;
  for (let region = 0; region < pool.regions.length; region++) {
    const cost = regionCost(members, region);
    if (!cost) continue;
    const option = { region, members, ...cost, teams: [] };
    if (!best || compareOptions(option, best) < 0) best = option;
  }
  return best?.region ?? -1;
}

/** Lower worst RTT, then lower sum, then region name (pool.regions is in name order). */
function compareOptions(a: Option, b: Option): number {
  return a.worst - b.worst || a.sum - b.sum || a.region - b.region;
}

function proposal(anchor: Entry, option: Option): ProposedMatch {
  const { pool } = anchor;
  const regionName = pool.regions[option.region] ?? '';
  const teams = balanceGroups(
    option.members.map((group) => ({ skills: group.members.map(balanceSkillOf) })),
    pool.rules.teamSize,
    pool.rules.teamCount,
    option.teams,
  );
  const participants = option.members
    .flatMap((group, index) =>
      group.members.map((member) =>
        Object.freeze({
          ticketId: member.ticketId,
          playerId: member.playerId,
          team: teams[index] ?? 0,
          rating: member.rating,
          rttMs: member.predictedRtt[regionName] ?? Number.NaN,
          ...(member.party ? { partyId: member.party.id } : {}),
        }),
      ),
    )
    .sort((a, b) => a.team - b.team || compareText(a.playerId, b.playerId));
  return Object.freeze({
    mode: pool.rules.mode,
    region: regionName,
    participants: Object.freeze(participants),
    worstRttMs: option.worst,
    sumRttMs: option.sum,
    anchorTicketId: anchor.candidate.ticketId,
    maxRttMs: anchor.step.maxRttMs,
    ratingWindow: anchor.step.ratingWindow,
  });
}

/** Why `entry` is still unmatched, read from the pool as the pass leaves it. */
function explain(entry: Entry): UnmatchedReason {
  const { pool, step, waitedMs } = entry;
  const next = nextWideningInMs(pool.rules, waitedMs);
  const ceiling = pool.ceilings.indexOf(step.maxRttMs);
  const needed = playersPerMatch(pool.rules);
  const refusedBy = new Set<number>();
  const accept = distanceFilter(entry, refusedBy);
  const shortfalls: RegionShortfall[] = [];
  let nearest: { region: string; rttMs: number } | null = null;
  // Whether an attribute rule is what keeps enough players apart in some region.
  let equalBlocks = false;
  let distanceBlocks = false;
  for (let region = 0; region < pool.regions.length; region++) {
    const name = pool.regions[region] ?? '';
    const rttMs = entry.rtt[region] ?? Number.NaN;
    if (Number.isNaN(rttMs)) continue;
    if (!nearest || rttMs < nearest.rttMs) nearest = { region: name, rttMs };
    const bucket = pool.buckets[region]?.[ceiling];
    if (rttMs > step.maxRttMs || !bucket) continue;
    const [lo, hi] = bucket.ratingRange(entry.rating, step.ratingWindow);
    const inRange = bucket.count(lo, hi);
    // With distance rules, only those within them count (this ticket is always within its own).
    const available = accept ? playersAccepted(bucket, lo, hi, needed, accept, pool) : inRange;
    shortfalls.push({ region: name, rttMs, available, missing: Math.max(1, needed - available) });
    if (inRange >= needed && available < needed) distanceBlocks = true;
    if (inRange < needed && inRange + inOtherPartitions(entry, name, ceiling) >= needed) {
      equalBlocks = true;
    }
  }
  if (shortfalls.length === 0 && nearest) return noRegionWithinLimit(step.maxRttMs, nearest, next);
  if (!shortfalls.some((shortfall) => shortfall.available >= needed)) {
    const blocking = attributeBlock(entry, equalBlocks, distanceBlocks, refusedBy, needed, next);
    if (blocking) return blocking;
  }
  return notEnoughPlayers(
    { playersPerMatch: needed, maxRttMs: step.maxRttMs, ratingWindow: step.ratingWindow },
    shortfalls,
    next,
  );
}

/**
 * The attribute rule that keeps `entry` from a match its RTT and rating limits would allow: the
 * equal rules when other pools of the mode would fill it, else the first distance rule that
 * refused a partner. Null when neither is the cause.
 */
function attributeBlock(
  entry: Entry,
  equalBlocks: boolean,
  distanceBlocks: boolean,
  refusedBy: ReadonlySet<number>,
  needed: number,
  nextWidening: number | null,
): UnmatchedReason | null {
  const { pool, candidate } = entry;
  if (equalBlocks) {
    const names = equalRules(pool.rules.attributeRules).map((rule) => rule.attribute);
    return attributeMismatch({
      rule: 'equal',
      attributes: names,
      values: Object.fromEntries(
        names.map((name) => [name, attributeValueOf(candidate.attributes, name) ?? null]),
      ),
      maxDistance: null,
      playersPerMatch: needed,
      nextWideningInMs: nextWidening,
    });
  }
  const index = [...refusedBy].sort((a, b) => a - b)[0];
  const rule = index === undefined ? undefined : pool.distanceRules[index];
  if (!distanceBlocks || index === undefined || !rule) return null;
  const value = entry.distanceValues[index] ?? Number.NaN;
  return attributeMismatch({
    rule: 'distance',
    attributes: [rule.attribute],
    values: { [rule.attribute]: Number.isNaN(value) ? null : value },
    maxDistance: entry.maxDistances[index] ?? 0,
    playersPerMatch: needed,
    nextWideningInMs: nextDistanceWideningInMs(rule, entry.waitedMs),
  });
}

/**
 * Unmatched tickets of the mode's other pools (other values of its equal rules) that `entry`'s
 * RTT ceiling and rating window would admit in `region`.
 */
function inOtherPartitions(entry: Entry, region: string, ceiling: number): number {
  let total = 0;
  for (const sibling of entry.pool.siblings) {
    if (sibling === entry.pool) continue;
    const bucket = sibling.buckets[sibling.regions.indexOf(region)]?.[ceiling];
    if (!bucket) continue;
    const [lo, hi] = bucket.ratingRange(entry.rating, entry.step.ratingWindow);
    total += bucket.count(lo, hi);
  }
  return total;
}

/**
 * The distance rules' test of partners for a search anchored by `anchor`, by age rank in its
 * pool; undefined when the mode has none. Records the index of each rule that refused someone.
 */
function distanceFilter(
  anchor: Entry,
  refusedBy?: Set<number>,
): ((rank: number) => boolean) | undefined {
  const count = anchor.pool.distanceRules.length;
  if (count === 0) return undefined;
  return (rank) => {
    const member = entryAt(anchor.pool, rank);
    for (let index = 0; index < count; index++) {
      const within = withinAttributeDistance(
        member.distanceValues[index] ?? Number.NaN,
        anchor.distanceValues[index] ?? Number.NaN,
        anchor.maxDistances[index] ?? 0,
      );
      if (!within) {
        refusedBy?.add(index);
        return false;
      }
    }
    return true;
  };
}

/** Players of the oldest groups in slots [lo, hi) that `accept` admits, counted up to `needed`. */
function playersAccepted(
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

function setActive(entry: Entry, active: boolean): void {
  for (const perCeiling of entry.pool.buckets) {
    for (const bucket of perCeiling) bucket.setActive(entry.rank, active);
  }
}

function entryAt(pool: ModePool, rank: number): Entry {
  const entry = pool.entries[rank];
  if (!entry) throw new Error(`no candidate at rank ${rank} in mode ${pool.rules.mode}`);
  return entry;
}

function byAge(a: Entry, b: Entry): number {
  return compareCandidates(a.candidate, b.candidate);
}

function compareCandidates(a: MatchCandidate, b: MatchCandidate): number {
  return a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || compareText(a.ticketId, b.ticketId);
}
