/** The match an anchor's chosen option proposes: teams balanced by skill, roles kept whole. */
import { balanceSkillOf } from '../rating/skill-rating';
import type { Option } from './formation-options';
import type { Entry } from './formation-pool';
import type { MatchCandidate, ProposedMatch, ProposedParticipant } from './match-candidate';
import { balanceGroups } from './party-teams';
import { roleRuleAt, rolesOf, teamsFillSlots } from './role-slots';
import { compareText } from './unmatched-reason';

export function proposal(anchor: Entry, option: Option): ProposedMatch {
  const { pool } = anchor;
  const regionName = pool.regions[option.region] ?? '';
  const balanced = balanceGroups(
    option.members.map((group) => ({ skills: group.members.map(balanceSkillOf) })),
    option.sizes,
    option.teams,
  );
  // Balance knows nothing of roles: a split that leaves a team's slot empty gives way to the
  // search's packing, which fills every slot.
  const rule = roleRuleAt(pool.rules, anchor.waitedMs);
  const teams =
    rule && !rolesHeld(option, balanced, (m) => rolesOf(m, rule), pool.slots)
      ? option.teams
      : balanced;
  const participants: ProposedParticipant[] = [];
  option.members.forEach((group, index) => {
    for (const member of group.members) {
      participants.push(participantOf(member, teams[index] ?? 0, regionName));
    }
  });
  participants.sort((a, b) => a.team - b.team || compareText(a.playerId, b.playerId));
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

/** One literal per shape rather than a spread of an optional partyId: one object per player. */
function participantOf(member: MatchCandidate, team: number, region: string): ProposedParticipant {
  const { ticketId, playerId, rating, party } = member;
  const rttMs = member.predictedRtt[region] ?? Number.NaN;
  return Object.freeze(
    party
      ? { ticketId, playerId, team, rating, rttMs, partyId: party.id }
      : { ticketId, playerId, team, rating, rttMs },
  );
}

function rolesHeld(
  option: Option,
  teams: readonly number[],
  rolesOfMember: (member: Entry['members'][number]) => readonly string[],
  slots: readonly string[],
): boolean {
  const byTeam = option.sizes.map(() => [] as (readonly string[])[]);
  option.members.forEach((group, index) => {
    byTeam[teams[index] ?? 0]?.push(...group.members.map(rolesOfMember));
  });
  return teamsFillSlots(byTeam, slots);
}
