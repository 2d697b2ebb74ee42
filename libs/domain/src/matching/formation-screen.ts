/**
 * A matching pass's screening: candidates checked, split by mode and by the values of its equal
 * rules, duplicates and players in several modes found, parties grouped; each pool then built by
 * formation-pool.ts. Every candidate lands in a pool or in the rejections.
 */
import { measuredRegions } from '../candidate/candidate.policy';
import { equalRuleKeys } from './attribute-rules';
import { partitioningEqualRules } from './pair-rules';
import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { isLabel, isValidDate } from '../shared/value.guards';
import { candidateProblems } from './candidate-problems';
import { type ModeRules } from './mode-rules';
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
import { buildPool, type Group, type ModePool } from './formation-pool';

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
  // A pass meets a handful of region names, each on thousands of candidates: checked once each.
  const labelChecks = new Map<string, boolean>();
  const isLabelOnce = (region: string): boolean => {
    let valid = labelChecks.get(region);
    if (valid === undefined) labelChecks.set(region, (valid = isLabel(region)));
    return valid;
  };
  for (const candidate of candidates) {
    const ticketId: unknown = candidate.ticketId;
    if (typeof ticketId !== 'string' || ticketId.length === 0) {
      throw new DomainError(
        DomainErrorCode.INVALID_ARGUMENT,
        'every candidate needs a ticketId string',
      );
    }
    // One lookup: the set did not grow, so the id was in it.
    const seen = ticketIds.size;
    if (ticketIds.add(ticketId).size === seen) {
      throw new DomainError(DomainErrorCode.INVALID_ARGUMENT, `ticket ${ticketId} appears twice`, {
        ticketId,
      });
    }
    const time = isValidDate(candidate.enqueuedAt)
      ? candidate.enqueuedAt.getTime()
      : Number.POSITIVE_INFINITY;
    const problems = candidateProblems(candidate);
    if (problems.length > 0) {
      rejected.push({ time, ticketId, reason: invalidCandidate(problems) });
      continue;
    }
    const modeRules = rulesByMode.get(candidate.mode);
    if (!modeRules) {
      rejected.push({ time, ticketId, reason: unknownMode(candidate.mode) });
      continue;
    }
    // A region name the match could not be created with is no region at all.
    const measured = measuredRegions(candidate.predictedRtt);
    const regions = measured.every(isLabelOnce) ? measured : measured.filter(isLabelOnce);
    if (regions.length === 0) {
      rejected.push({ time, ticketId, reason: noRegion() });
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
    // One that becomes optional after a wait cannot: the search checks it (pair-rules.ts).
    const keyOf = equalRuleKeys(partitioningEqualRules(modeRules.attributeRules));
    const partitions = new Map<string, typeof kept>();
    for (const item of kept) {
      const key = keyOf(item.candidate.attributes);
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
  for (const { candidate, regions, time } of candidates) {
    const partyId = candidate.party?.id;
    if (partyId === undefined) {
      groups.push({ members: [candidate], regions, time });
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
      const group = { members: [candidate], regions: [...regions], time };
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
