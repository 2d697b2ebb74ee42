import {
  equalRuleKey,
  equalRules,
  intersectRules,
  isLabel,
  rulesInForce,
  roleRuleAt,
  rolesOf,
  slotsOf,
  teamsFillSlots,
  setsIntersect,
  PartyRoster,
  minPlayersAt,
  playersPerMatch,
  teamSizesFor,
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
 * A proposal is accepted only if it is of the pass's mode, has exactly each team's size (teamSizesOf)
 * in each of teamCount teams, names only this pass's candidates (player ids included), in a region every
 * participant measured, whose participants agree on every equal attribute rule of the mode (a
 * match of mixed build versions could not be played) and share a value of every intersect rule's
 * set (each rule optional after a wait only once the oldest participant has waited that long),
 * fills every team's role slots (the mode's role rule, unless relaxed at the oldest participant's
 * wait), puts no player with one it blocked or is blocked by, keeps every party whole (all of its
 * members, one team), and shares no ticket or player with a proposal accepted before it.
 */
export function screenProposals(
  proposals: readonly ProposedMatch[],
  rules: ModeRules,
  candidates: ReadonlyMap<string, MatchCandidate>,
  now: Date,
): { accepted: ProposedMatch[]; rejected: RejectedProposal[] } {
  const accepted: ProposedMatch[] = [];
  const rejected: RejectedProposal[] = [];
  const usedTickets = new Set<string>();
  const usedPlayers = new Set<string>();
  const parties = new PartyRoster(candidates.values());
  for (const proposal of proposals) {
    const problem =
      proposalProblem(proposal, rules, candidates, usedTickets, usedPlayers, now) ??
      attributeProblem(proposal, rules, candidates, now) ??
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
  now: Date,
): string | undefined {
  if (proposal.mode !== rules.mode) return `mode ${proposal.mode} in a pass of ${rules.mode}`;
  if (!isLabel(proposal.region)) return 'region is not a region name';
  // With fill steps, fewer whole teams once the oldest participant has waited long enough.
  const oldest = Math.min(
    ...proposal.participants.map(
      (p) => candidates.get(p.ticketId)?.enqueuedAt.getTime() ?? now.getTime(),
    ),
  );
  const count = proposal.participants.length;
  const sizes = teamSizesFor(rules, Math.max(0, now.getTime() - oldest), count);
  if (!sizes) {
    const min = minPlayersAt(rules, Math.max(0, now.getTime() - oldest));
    const needs = min === playersPerMatch(rules) ? `${min}` : `${min}-${playersPerMatch(rules)}`;
    return `${count} participants, ${rules.mode} needs ${needs}`;
  }
  const perTeam = new Array<number>(sizes.length).fill(0);
  const tickets = new Set<string>();
  const players = new Set<string>();
  for (const participant of proposal.participants) {
    const { team, ticketId, playerId } = participant;
    if (!Number.isInteger(team) || team < 0 || team >= sizes.length)
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
    tickets.add(ticketId);
    players.add(playerId);
  }
  if (perTeam.some((size, team) => size !== sizes[team])) {
    return `teams of ${perTeam.join('/')} players, ${rules.mode} needs ${sizes.join('/')}`;
  }
  return undefined;
}

/** Run after proposalProblem: every participant is a candidate of the pass. */
function attributeProblem(
  proposal: ProposedMatch,
  rules: ModeRules,
  candidates: ReadonlyMap<string, MatchCandidate>,
  now: Date,
): string | undefined {
  const members = proposal.participants.map(({ ticketId }) => candidates.get(ticketId));
  const oldest = Math.min(...members.map((member) => member?.enqueuedAt.getTime() ?? Infinity));
  const inForce = rulesInForce(rules.attributeRules, Math.max(0, now.getTime() - oldest));
  const attributes = members.map((member) => member?.attributes);
  const equal = equalRules(inForce);
  if (new Set(attributes.map((values) => equalRuleKey(equal, values))).size > 1) {
    return `participants differ on ${equal.map((rule) => rule.attribute).join(', ')}, which must be equal`;
  }
  const disjoint = intersectRules(inForce).find((rule) => !setsIntersect(rule, attributes));
  if (disjoint) return `participants share no value of ${disjoint.attribute}`;
  const roles = roleRuleAt(rules, Math.max(0, now.getTime() - oldest));
  if (roles) {
    const teams = new Map<number, (readonly string[])[]>();
    proposal.participants.forEach(({ team }, index) => {
      const member = members[index];
      teams.set(team, [...(teams.get(team) ?? []), member ? rolesOf(member, roles) : []]);
    });
    if (!teamsFillSlots([...teams.values()], slotsOf(roles))) {
      return `a team lacks the roles of ${roles.attribute} every team needs`;
    }
  }
  const players = new Set(proposal.participants.map(({ playerId }) => playerId));
  const blocking = members.find((member) =>
    member?.blockedPlayerIds?.some((playerId) => players.has(playerId)),
  );
  return (
    blocking && `player ${blocking.playerId} has blocked, or is blocked by, another participant`
  );
}
