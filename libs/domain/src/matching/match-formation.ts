import { assertNow } from '../shared/value.guards';
import { assertModeRules, type ModeRules } from './mode-rules';
import { compareText, playerMatched, type UnmatchedReason } from './unmatched-reason';
import type { MatchCandidate, MatchFormation, ProposedMatch } from './match-candidate';
import {
  byAge,
  MATCHED,
  OPEN,
  RETIRED,
  setActive,
  type Entry,
  type ModePool,
} from './formation-pool';
import { screen } from './formation-screen';
import { bestOption } from './formation-options';
import { proposal } from './formation-proposal';
import { explain } from './formation-explain';

export type {
  CandidateParty,
  MatchCandidate,
  MatchFormation,
  ProposedMatch,
  ProposedParticipant,
} from './match-candidate';

/** The signature studios implement to replace the matching policy (the matcher binds it to a token). */
export type MatchingFunction = typeof formMatches;

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
 * Intersect rules (set attributes) and equal rules optional after a wait are checked the same way
 * per "choice", a value the whole match shares, each choice searched in turn and the best option
 * over all of them taken (pair-rules.ts); a rule past its wait for the anchor drops out. Block
 * lists pass over a group that blocks, or is blocked by, anyone already taken, as a party that
 * does not fit is passed over. Avoid lists are checked so too, but only in a first search: an
 * anchor whose search with them fills no match (in any shape) searches again without them
 * (docs/decisions/2026-12-07-avoid-lists.md); the guarantees below speak of that second search.
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
  const { pools, rejected, inSeveralModes } = screen(candidates, rules, now);

  const matches: ProposedMatch[] = [];
  const entriesOfPlayer = entriesOfPlayersInSeveralModes(pools, inSeveralModes);
  const matchedTicketOfPlayer = new Map<string, string>();

  // Anchors across modes in one age order, so a player queued in two modes is first matched
  // through the older ticket.
  const anchors = pools.flatMap((pool) => pool.entries).sort(byAge);
  for (const anchor of anchors) {
    if (anchor.pool.settled[anchor.rank] !== OPEN) continue;
    const option = bestOption(anchor);
    if (!option) continue;
    matches.push(proposal(anchor, option));
    for (const group of option.members) {
      group.pool.settled[group.rank] = MATCHED;
      // bestOption switched the anchor off already.
      if (group !== anchor) setActive(group, false);
      for (const member of group.members) {
        const others = entriesOfPlayer.get(member.playerId);
        if (!others) continue;
        matchedTicketOfPlayer.set(member.playerId, member.ticketId);
        for (const entry of others) {
          if (entry === group) continue;
          setActive(entry, false);
          entry.pool.settled[entry.rank] = RETIRED;
        }
      }
    }
  }

  const unmatched: { time: number; ticketId: string; reason: UnmatchedReason }[] = [...rejected];
  for (const entry of anchors) {
    if (entry.pool.settled[entry.rank] === MATCHED) continue;
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

/** The entries of each player who has tickets in several modes, by player id. */
function entriesOfPlayersInSeveralModes(
  pools: readonly ModePool[],
  inSeveralModes: ReadonlySet<MatchCandidate>,
): Map<string, Entry[]> {
  const entriesOf = new Map<string, Entry[]>();
  if (inSeveralModes.size === 0) return entriesOf;
  for (const pool of pools) {
    for (const entry of pool.entries) {
      for (const member of entry.members) {
        if (!inSeveralModes.has(member)) continue;
        const list = entriesOf.get(member.playerId);
        if (list) list.push(entry);
        else entriesOf.set(member.playerId, [entry]);
      }
    }
  }
  return entriesOf;
}
