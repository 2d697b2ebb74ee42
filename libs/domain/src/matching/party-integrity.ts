import type { MatchCandidate, ProposedMatch } from './match-formation';

/**
 * Who is in which party among a pass's candidates, to check a proposed match keeps every party
 * whole: all of its members in the match, all on one team. The matcher screens proposals with it
 * (a replaced matching function cannot split a party) and tests and benches count splits with it.
 */
export class PartyRoster {
  private readonly partyOfTicket = new Map<string, string>();
  private readonly ticketsOfParty = new Map<string, string[]>();

  constructor(candidates: Iterable<MatchCandidate>) {
    for (const candidate of candidates) {
      const partyId = candidate.party?.id;
      if (partyId === undefined) continue;
      this.partyOfTicket.set(candidate.ticketId, partyId);
      const tickets = this.ticketsOfParty.get(partyId);
      if (tickets) tickets.push(candidate.ticketId);
      else this.ticketsOfParty.set(partyId, [candidate.ticketId]);
    }
  }

  /** Each party `match` splits (across teams) or takes only part of, with why; empty when none. */
  problems(match: ProposedMatch): { partyId: string; problem: string }[] {
    const teamsOfParty = new Map<string, Set<number>>();
    const ticketsInMatch = new Set<string>();
    for (const participant of match.participants) {
      ticketsInMatch.add(participant.ticketId);
      const partyId = this.partyOfTicket.get(participant.ticketId);
      if (partyId === undefined) continue;
      const teams = teamsOfParty.get(partyId);
      if (teams) teams.add(participant.team);
      else teamsOfParty.set(partyId, new Set([participant.team]));
    }
    const problems: { partyId: string; problem: string }[] = [];
    for (const [partyId, teams] of teamsOfParty) {
      const members = this.ticketsOfParty.get(partyId) ?? [];
      const missing = members.filter((ticketId) => !ticketsInMatch.has(ticketId));
      if (missing.length > 0) {
        problems.push({
          partyId,
          problem: `party ${partyId} is in the match without ${missing.length} of its ${members.length} players`,
        });
      } else if (teams.size > 1) {
        problems.push({ partyId, problem: `party ${partyId} is split over ${teams.size} teams` });
      }
    }
    return problems;
  }
}

/**
 * The parties that `matches` split across teams or matched only in part (members in different
 * matches count too), as distinct party ids in first-seen order: what must always be empty.
 */
export function partiesSplit(
  matches: readonly ProposedMatch[],
  candidates: Iterable<MatchCandidate>,
): string[] {
  const roster = new PartyRoster(candidates);
  const split = new Set<string>();
  for (const match of matches) {
    for (const { partyId } of roster.problems(match)) split.add(partyId);
  }
  return [...split];
}
