// class-transformer's @Type reads the emitted design types at decoration time.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, ValidateNested } from 'class-validator';
import {
  canTransitionMatch,
  MatchCancelReason,
  MatchFailureReason,
  matchReasonsFor,
  MATCH_INITIAL_STATES,
  MATCH_STATES,
  participantProblems,
  type MatchEndReason,
  type MatchParticipantsAddedPayload,
  type MatchState,
  type MatchStateChangedPayload,
} from '@matchplane/domain';
import {
  IfPresent,
  IsCanonicalUuid,
  MatchEventSchema,
  NullOrIn,
  ParticipantSchema,
  reasonProblems,
  transitionProblems,
  type EnvelopeProblem,
} from './event-schema.parts';

/* The match aggregate's state changes and backfilled players (its presence changes: match-presence.schema.ts). */

const MATCH_END_REASONS: readonly MatchEndReason[] = [
  ...Object.values(MatchFailureReason),
  ...Object.values(MatchCancelReason),
];

/** `match.state_changed`: the match entered `to` (a failure or cancellation says why). */
export class MatchStateChangedSchema extends MatchEventSchema {
  @NullOrIn(MATCH_STATES)
  from!: MatchState | null;

  @IsIn(MATCH_STATES)
  to!: MatchState;

  @IfPresent()
  @IsIn(MATCH_END_REASONS)
  reason?: MatchEndReason;
}

/** `match.participants_added`: a backfill request added players to the running match. */
export class MatchParticipantsAddedSchema extends MatchEventSchema {
  @IsIn(MATCH_STATES)
  state!: MatchState;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => ParticipantSchema)
  added!: ParticipantSchema[];

  @IsCanonicalUuid()
  backfillRequestId!: string;
}

export function matchRules(payload: MatchStateChangedPayload): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const { from, to, reason } = payload;
  const legal = from === null ? MATCH_INITIAL_STATES.includes(to) : canTransitionMatch(from, to);
  problems.push(...transitionProblems('match', from, to, legal));
  problems.push(...reasonProblems(matchReasonsFor(to), reason, `${to}`));
  for (const message of participantProblems(payload.participants)) {
    problems.push({ field: 'payload.participants', message });
  }
  return problems;
}

export function participantsAddedRules(payload: MatchParticipantsAddedPayload): EnvelopeProblem[] {
  const problems = participantProblems(payload.participants).map((message) => ({
    field: 'payload.participants',
    message,
  }));
  const roster = new Set(payload.participants.map((p) => `${p.playerId}/${p.ticketId}/${p.team}`));
  if (!payload.added.every((p) => roster.has(`${p.playerId}/${p.ticketId}/${p.team}`))) {
    problems.push({ field: 'payload.added', message: 'every added player must be on the roster' });
  }
  return problems;
}
