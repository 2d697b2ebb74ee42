import {
  equalRuleKey,
  equalRules,
  isLabel,
  PartyRoster,
  playersPerMatch,
  type MatchCandidate,
  type ModeRules,
  type ProposedMatch,
} from '@matchplane/domain';

export interface RejectedProposal {
  readonly proposal: ProposedMatch;
  readonly problem: string;
}

/**
 * Checks what the matching function proposed against the pass's own input before anything is
 * locked: the function is replaceable studio code, so its output is data to check, not a promise.
 * A proposal is accepted only if it is of the pass's mode, has exactly teamSize players in each
 * of teamCount teams, names only this pass's candidates (player ids included), in a region every
 * participant measured, whose participants agree on every equal attribute rule of the mode (a
 * match of mixed build versions could not be played), keeps every party whole (all of its
 * members, one team), and shares no ticket or player with a proposal accepted before it.
 */
export function screenProposals(
  proposals: readonly ProposedMatch[],
  rules: ModeRules,
  candidates: ReadonlyMap<string, MatchCandidate>,
): { accepted: ProposedMatch[]; rejected: RejectedProposal[] } {
  const accepted: ProposedMatch[] = [];
  const rejected: RejectedProposal[] = [];
  const usedTickets = new Set<string>();
  const usedPlayers = new Set<string>();
  const parties = new PartyRoster(candidates.values());
  for (const proposal of proposals) {
    const problem =
      proposalProblem(proposal, rules, candidates, usedTickets, usedPlayers) ??
      parties.problems(proposal)[0]?.problem;
    if (problem) {
      rejected.push({ proposal, problem });
      continue;
    }
    accepted.push(proposal);
    for (const participant of proposal.participants) {
      usedTickets.add(participant.ticketId);
      usedPlayers.add(participant.playerId);
    }
  }
  return { accepted, rejected };
}

function proposalProblem(
  proposal: ProposedMatch,
  rules: ModeRules,
  candidates: ReadonlyMap<string, MatchCandidate>,
  usedTickets: ReadonlySet<string>,
  usedPlayers: ReadonlySet<string>,
): string | undefined {
  if (proposal.mode !== rules.mode) return `mode ${proposal.mode} in a pass of ${rules.mode}`;
  if (!isLabel(proposal.region)) return 'region is not a region name';
  if (proposal.participants.length !== playersPerMatch(rules)) {
    return `${proposal.participants.length} participants, ${rules.mode} needs ${playersPerMatch(rules)}`;
  }
  const equal = equalRules(rules.attributeRules);
  let equalKey: string | undefined;
  const perTeam = new Array<number>(rules.teamCount).fill(0);
  const tickets = new Set<string>();
  const players = new Set<string>();
  for (const participant of proposal.participants) {
    const { team, ticketId, playerId } = participant;
    if (!Number.isInteger(team) || team < 0 || team >= rules.teamCount)
      return `team ${team} out of range`;
    perTeam[team] = (perTeam[team] ?? 0) + 1;
    const candidate = candidates.get(ticketId);
    if (!candidate) return `ticket ${ticketId} is not a candidate of this pass`;
    if (candidate.playerId !== playerId) return `ticket ${ticketId} is not player ${playerId}'s`;
    if (tickets.has(ticketId) || usedTickets.has(ticketId))
      return `ticket ${ticketId} proposed twice`;
    if (players.has(playerId) || usedPlayers.has(playerId))
      return `player ${playerId} proposed twice`;
    const rtt = candidate.predictedRtt[proposal.region];
    if (typeof rtt !== 'number' || !Number.isFinite(rtt) || rtt < 0) {
      return `ticket ${ticketId} has not measured ${proposal.region}`;
    }
    const key = equalRuleKey(equal, candidate.attributes);
    if (equalKey !== undefined && key !== equalKey) {
      return `participants differ on ${equal.map((rule) => rule.attribute).join(', ')}, which must be equal`;
    }
    equalKey = key;
    tickets.add(ticketId);
    players.add(playerId);
  }
  if (perTeam.some((size) => size !== rules.teamSize)) {
    return `teams of ${perTeam.join('/')} players, ${rules.mode} needs ${rules.teamSize} each`;
  }
  return undefined;
}
