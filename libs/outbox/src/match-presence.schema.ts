import { IsIn } from 'class-validator';
import {
  MATCH_PRESENCES,
  participantProblems,
  type MatchPresence,
  type MatchPresenceChangedPayload,
} from '@matchplane/domain';
import {
  IfPresent,
  IsCanonicalUuid,
  IsIsoInstant,
  MatchEventSchema,
  type EnvelopeProblem,
} from './event-schema.parts';

/** `match.presence_changed`: a participant LEFT, REJOINED or ABANDONED the running match. */
export class MatchPresenceChangedSchema extends MatchEventSchema {
  @IsIn(['IN_PROGRESS'])
  state!: 'IN_PROGRESS';

  @IsCanonicalUuid()
  playerId!: string;

  @IsIn(MATCH_PRESENCES)
  presence!: MatchPresence;

  @IfPresent()
  @IsIsoInstant()
  rejoinDeadline?: string;
}

/** The player is on the roster; a rejoin deadline comes with LEFT and only with it. */
export function presenceRules(payload: MatchPresenceChangedPayload): EnvelopeProblem[] {
  const problems = participantProblems(payload.participants).map((message) => ({
    field: 'payload.participants',
    message,
  }));
  if (!payload.participants.some((p) => p.playerId === payload.playerId)) {
    problems.push({ field: 'payload.playerId', message: 'must be a participant of the match' });
  }
  if ((payload.presence === 'LEFT') !== (payload.rejoinDeadline !== undefined)) {
    problems.push({
      field: 'payload.rejoinDeadline',
      message: 'must be present exactly when presence is LEFT',
    });
  }
  return problems;
}
