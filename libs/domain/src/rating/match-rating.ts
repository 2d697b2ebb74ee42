import { rate } from 'openskill';
import { skillProblem, type SkillRating } from './skill-rating';
import { DomainError, DomainErrorCode } from '../shared/domain.error';

/** A participant of a finished match, as the rating rule reads it. */
export interface RatedParticipant {
  readonly playerId: string;
  readonly team: number;
  readonly skill: SkillRating;
  /** Whether the game server reported the player connected (false: a no-show). */
  readonly connected: boolean;
  /** The player left and did not rejoin within its grace window (ABANDONED). */
  readonly abandoned?: boolean;
}

/** What the game server reported at the end (see the result route). */
export interface ReportedResult {
  readonly outcome: 'COMPLETED' | 'FAILED';
  /** The winning team; absent on a COMPLETED result: a draw. */
  readonly winningTeam?: number;
}

export interface RatingChange {
  readonly playerId: string;
  readonly before: SkillRating;
  readonly after: SkillRating;
}

/**
 * Who is rated and how, after a match ends (docs/architecture/ratings.md):
 * - only a COMPLETED result rates; FAILED (and a match that ends without a result: cancelled,
 *   failed by the control plane) changes nobody;
 * - only connected participants are rated: a no-show neither played nor lost (the no-show
 *   cooldown is its penalty), and is left out of the teams the others are rated against;
 * - a team left without a connected player is left out; when fewer than two teams remain, or the
 *   winning team is one left out, nobody is rated (there is no game to learn from);
 * - the winning team ranks first and every other team ties second; no winning team is a draw
 *   (every team ties). Per-player scores are not used: their meaning is the game's own, and the
 *   outcome between teams is what the matcher balances for;
 * - an abandoner (ABANDONED: left, not back within the grace window) is rated a loss whatever
 *   its team's result: alone, ranked below the other teams' players who stayed; it is left out
 *   of its team, so the others are rated as if it had never played (they neither gain nor lose
 *   from its leaving).
 * The maths is openskill's `rate` (Plackett-Luce, its default options).
 */
export function rateMatch(
  participants: readonly RatedParticipant[],
  result: ReportedResult,
): RatingChange[] {
  if (result.outcome !== 'COMPLETED') return [];
  for (const participant of participants) {
    const problem = skillProblem(participant.skill);
    if (problem) {
      throw new DomainError(
        DomainErrorCode.INVALID_ARGUMENT,
        `rating of ${participant.playerId}: ${problem}`,
      );
    }
  }
  const byTeam = new Map<number, RatedParticipant[]>();
  for (const participant of participants.filter((p) => p.connected && !p.abandoned)) {
    const team = byTeam.get(participant.team) ?? [];
    team.push(participant);
    byTeam.set(participant.team, team);
  }
  const teams = [...byTeam.entries()].sort(([a], [b]) => a - b);
  const losses = participants
    .filter((p) => p.connected && p.abandoned)
    .flatMap((abandoner) => abandonerLoss(abandoner, teams));
  return [...teamResults(teams, result), ...losses];
}

function teamResults(
  teams: readonly [number, RatedParticipant[]][],
  result: ReportedResult,
): RatingChange[] {
  if (teams.length < 2) return [];
  if (result.winningTeam !== undefined && !teams.some(([team]) => team === result.winningTeam))
    return [];
  const ranks = teams.map(([team]) =>
    result.winningTeam === undefined || team === result.winningTeam ? 1 : 2,
  );
  const rated = rate(
    teams.map(([, members]) => members.map((member) => ({ ...member.skill }))),
    { rank: ranks },
  );
  return teams.flatMap(([, members], teamIndex) =>
    members.map((member, index) => {
      const after = rated[teamIndex]?.[index];
      if (!after) throw new Error('openskill returned fewer ratings than it was given');
      return {
        playerId: member.playerId,
        before: member.skill,
        after: { mu: after.mu, sigma: after.sigma },
      };
    }),
  );
}

/** The abandoner alone, ranked below every other team's players who stayed; none left: no change. */
function abandonerLoss(
  abandoner: RatedParticipant,
  teams: readonly [number, RatedParticipant[]][],
): RatingChange[] {
  const opponents = teams.filter(([team]) => team !== abandoner.team);
  if (opponents.length === 0) return [];
  const [after] = rate(
    [
      [{ ...abandoner.skill }],
      ...opponents.map(([, members]) => members.map((m) => ({ ...m.skill }))),
    ],
    { rank: [2, ...opponents.map(() => 1)] },
  );
  const skill = after?.[0];
  if (!skill) throw new Error('openskill returned fewer ratings than it was given');
  return [
    {
      playerId: abandoner.playerId,
      before: abandoner.skill,
      after: { mu: skill.mu, sigma: skill.sigma },
    },
  ];
}
