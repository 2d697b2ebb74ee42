import {
  distanceRules,
  equalRuleKey,
  equalRules,
  intersectRules,
  maxDistanceAt,
  rulesInForce,
  setsIntersect,
  numericAttribute,
  withinAttributeDistance,
  type TicketAttributes,
} from './attribute-rules';
import type { MatchCandidate } from './match-formation';
import { wideningStepAt, type ModeRules } from './mode-rules';
import { withinRatingWindow } from './region-bucket';
import { RolePacking, roleRuleAt, rolesOf } from './role-slots';

/** What the matcher fills a backfill request against: the running match's server and team. */
export interface BackfillNeed {
  readonly requestId: string;
  readonly matchId: string;
  readonly team: number;
  readonly slots: number;
  /** Where the match's server runs: every added player must have measured it. */
  readonly serverRegion: string;
  /** The team's mean rating when the request was made: the anchor of the rating window. */
  readonly teamRating: number;
  /** The match's attributes (its players'): the anchor of the mode's attribute rules. */
  readonly attributes: TicketAttributes;
  /**
   * The roles the team's still-present players leave open under the mode's roles rule (the API
   * works them out when the request is made): the players added must cover them. Absent or []:
   * none.
   */
  readonly openRoles?: readonly string[];
  /**
   * Players already in the match (no-shows included): never added again, nor anyone whose block
   * list (`MatchCandidate.blockedPlayerIds`, both directions) names one of them; one whose avoid
   * list names one only when the request fills no other way.
   */
  readonly excludedPlayerIds: readonly string[];
  readonly createdAt: Date;
}

export interface BackfillPick {
  readonly need: BackfillNeed;
  /** Exactly `need.slots` candidates, whole parties only, oldest first. */
  readonly candidates: readonly MatchCandidate[];
}

/**
 * Fills backfill requests from a mode's candidates, oldest request first, before the pass forms
 * new matches (a running match short of players waits on nobody else). A request is filled
 * whole or not at all, by the oldest candidates that fit it under the mode's rules at the
 * request's age (as a waiting ticket's limits widen, so do a request's): measured the server's
 * region within the RTT ceiling, rated within the window of the team's mean, on the match's
 * equal-attribute values and within its distance rules, sharing a value of each intersect rule's
 * set with the match's attributes (the API narrows each set to what the match's players share),
 * and in a party that fits the places left, leaving room for the team's open roles (the mode's
 * roles rule, `openRoles`). A candidate goes to one request at most. Returns the picks and the candidates left.
 */
export function selectBackfill(
  needs: readonly BackfillNeed[],
  candidates: readonly MatchCandidate[],
  rules: ModeRules,
  now: Date,
): { picks: BackfillPick[]; remaining: MatchCandidate[] } {
  const taken = new Set<string>();
  const picks: BackfillPick[] = [];
  const oldestFirst = [...candidates].sort(
    (a, b) => a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || (a.ticketId < b.ticketId ? -1 : 1),
  );
  const requests = [...needs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const need of requests) {
    // Avoid lists as in a new match: kept apart unless the request fills no other way.
    const chosen =
      fill(need, oldestFirst, taken, rules, now, true) ??
      fill(need, oldestFirst, taken, rules, now, false);
    if (chosen === undefined) continue;
    for (const candidate of chosen) taken.add(candidate.ticketId);
    picks.push({ need, candidates: chosen });
  }
  return { picks, remaining: candidates.filter((c) => !taken.has(c.ticketId)) };
}

function fill(
  need: BackfillNeed,
  oldestFirst: readonly MatchCandidate[],
  taken: ReadonlySet<string>,
  rules: ModeRules,
  now: Date,
  keepAvoidsApart: boolean,
): MatchCandidate[] | undefined {
  const waitedMs = Math.max(0, now.getTime() - need.createdAt.getTime());
  const step = wideningStepAt(rules, waitedMs);
  // An optional rule is waived for a request as old as a waiting ticket it would be waived for.
  const inForce = rulesInForce(rules.attributeRules, waitedMs);
  const equal = equalRules(inForce);
  const intersect = intersectRules(inForce);
  const anchorKey = equalRuleKey(equal, need.attributes);
  const distances = distanceRules(rules.attributeRules).map((rule) => ({
    rule,
    anchor: numericAttribute(need.attributes, rule.attribute),
    max: maxDistanceAt(rule, waitedMs),
  }));
  const excluded = new Set(need.excludedPlayerIds);
  const fits = (candidate: MatchCandidate): boolean => {
    if (taken.has(candidate.ticketId) || excluded.has(candidate.playerId)) return false;
    // The match's players (excluded) are who a candidate's block list must not name.
    if (candidate.blockedPlayerIds?.some((playerId) => excluded.has(playerId))) return false;
    if (keepAvoidsApart && candidate.avoidedPlayerIds?.some((id) => excluded.has(id))) return false;
    const rtt = candidate.predictedRtt[need.serverRegion];
    if (typeof rtt !== 'number' || !Number.isFinite(rtt) || rtt < 0 || rtt > step.maxRttMs) {
      return false;
    }
    if (!withinRatingWindow(candidate.rating, need.teamRating, step.ratingWindow)) return false;
    const attributes = candidate.attributes ?? {};
    if (equal.length > 0 && equalRuleKey(equal, attributes) !== anchorKey) return false;
    if (!intersect.every((rule) => setsIntersect(rule, [need.attributes, attributes]))) {
      return false;
    }
    return distances.every(({ rule, anchor, max }) =>
      withinAttributeDistance(numericAttribute(attributes, rule.attribute), anchor, max),
    );
  };

  // A party is taken whole: every member present and fitting, and the group fits what is left.
  const parties = new Map<string, MatchCandidate[]>();
  for (const candidate of oldestFirst) {
    if (candidate.party) {
      const members = parties.get(candidate.party.id) ?? [];
      members.push(candidate);
      parties.set(candidate.party.id, members);
    }
  }
  // The team's open roles, while the roles rule applies at the request's age: the places keep
  // room for them as a new match's teams do (RolePacking), so the oldest who fits, fills them.
  const roleRule = roleRuleAt(rules, waitedMs);
  const open = roleRule && need.openRoles?.length ? need.openRoles.slice(0, need.slots) : [];
  const roles = roleRule && open.length > 0 ? new RolePacking([need.slots], open) : undefined;
  const holds = (group: readonly MatchCandidate[]) => {
    if (!roles || !roleRule) return true;
    return roles.add(group.map((member) => rolesOf(member, roleRule))) >= 0;
  };
  const chosen: MatchCandidate[] = [];
  const seenParties = new Set<string>();
  for (const candidate of oldestFirst) {
    if (chosen.length === need.slots) break;
    const left = need.slots - chosen.length;
    if (!candidate.party) {
      if (fits(candidate) && holds([candidate])) chosen.push(candidate);
      continue;
    }
    if (seenParties.has(candidate.party.id)) continue;
    seenParties.add(candidate.party.id);
    const members = parties.get(candidate.party.id) ?? [];
    if (
      members.length === candidate.party.size &&
      candidate.party.size <= left &&
      members.every(fits) &&
      holds(members)
    ) {
      chosen.push(...members);
    }
  }
  return chosen.length === need.slots ? chosen : undefined;
}
