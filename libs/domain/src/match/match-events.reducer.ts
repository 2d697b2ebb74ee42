import { DomainError, DomainErrorCode } from '../shared/domain.error';
import {
  expectNextEvent,
  inconsistent,
  sameIdSet,
  type HistoryEvent,
} from '../shared/history.guards';
import { isLabel, isUuid } from '../shared/value.guards';
import {
  addedParticipantProblems,
  canonicalRoster,
  matchPlayerIds,
  participantProblems,
  type MatchSnapshot,
} from './match.aggregate';
import {
  MATCH_PARTICIPANTS_ADDED,
  MATCH_STATE_CHANGED,
  type MatchParticipant,
  type MatchParticipantsAddedPayload,
  type MatchStateChangedPayload,
} from './match.events';
import {
  canTransitionMatch,
  isMatchState,
  MATCH_INITIAL_STATES,
  matchReasonsFor,
  type MatchEndReason,
  type MatchState,
} from './match-state.machine';
import {
  MATCH_PRESENCE_CHANGED,
  presenceChanged,
  type MatchPresenceChangedPayload,
} from './match-presence';

/** A match event as a transition returns it, or as the outbox delivers it. */
export type MatchHistoryEvent =
  | HistoryEvent<typeof MATCH_STATE_CHANGED, MatchStateChangedPayload>
  | HistoryEvent<typeof MATCH_PARTICIPANTS_ADDED, MatchParticipantsAddedPayload>
  | HistoryEvent<typeof MATCH_PRESENCE_CHANGED, MatchPresenceChangedPayload>;

/** Every event type a match's history holds: a match aggregate's outbox rows, nothing else. */
export const MATCH_HISTORY_EVENT_TYPES: ReadonlySet<string> = new Set([
  MATCH_STATE_CHANGED,
  MATCH_PARTICIPANTS_ADDED,
  MATCH_PRESENCE_CHANGED,
]);

/**
 * The match its events describe, oldest first. Without `since`, the history must start at the
 * creation (revision 1); with it, at `since.revision + 1` (a client resuming from what it saw).
 * Throws REVISION_GAP on a skipped, repeated or reordered revision and INCONSISTENT_HISTORY on an
 * event that could not follow the one before it.
 */
export function foldMatchEvents(
  events: readonly MatchHistoryEvent[],
  since?: MatchSnapshot,
): MatchSnapshot {
  const folded = events.reduce<MatchSnapshot | undefined>(applyMatchEvent, since);
  if (folded === undefined) throw inconsistent('a match history needs at least its creation event');
  return folded;
}

/** One step of {@link foldMatchEvents}: the snapshot after `event`, given the one before it. */
export function applyMatchEvent(
  current: MatchSnapshot | undefined,
  event: MatchHistoryEvent,
): MatchSnapshot {
  const where = `match ${event.aggregateId} r${String(event.revision)}`;
  if (event.event === MATCH_PARTICIPANTS_ADDED && event.aggregateType === 'match') {
    return participantsAdded(where, current, event);
  }
  if (event.event === MATCH_PRESENCE_CHANGED && event.aggregateType === 'match') {
    return presenceChanged(where, current, event);
  }
  if (event.event !== MATCH_STATE_CHANGED || event.aggregateType !== 'match') {
    throw inconsistent(
      `${where}: ${String(event.event)} on ${event.aggregateType} is not a match event`,
    );
  }
  const { revision, occurredAt } = expectNextEvent(where, event, current, 'match');
  const { payload } = event;
  if (payload.matchId !== event.aggregateId) {
    throw inconsistent(
      `${where}: payload.matchId ${String(payload.matchId)} is not the aggregate id`,
    );
  }
  if (!isMatchState(payload.to))
    throw inconsistent(`${where}: unknown state ${String(payload.to)}`);
  const base =
    current === undefined ? creation(where, event) : continuation(where, current, payload);
  const reason = expectReason(where, payload);
  if (!sameIdSet(event.playerIds, matchPlayerIds(base))) {
    throw inconsistent(`${where}: playerIds are not exactly the participants`);
  }
  const serverRegion = expectServerRegion(where, current, payload);
  return Object.freeze({
    id: base.id,
    mode: base.mode,
    region: base.region,
    ...(serverRegion === undefined ? {} : { serverRegion }),
    state: payload.to,
    revision,
    participants: base.participants,
    ...(reason === undefined ? {} : { failureReason: reason }),
    stateChangedAt: occurredAt,
  });
}

/** A backfill's players joined: same state and identity, the roster grown by exactly `added`. */
function participantsAdded(
  where: string,
  current: MatchSnapshot | undefined,
  event: HistoryEvent<typeof MATCH_PARTICIPANTS_ADDED, MatchParticipantsAddedPayload>,
): MatchSnapshot {
  if (current === undefined)
    throw inconsistent(`${where}: a match history starts with its creation`);
  const { revision } = expectNextEvent(where, event, current, 'match');
  const { payload } = event;
  if (payload.matchId !== current.id || payload.state !== current.state) {
    throw inconsistent(`${where}: players were added to another match or in another state`);
  }
  if (current.state !== 'IN_PROGRESS') {
    throw inconsistent(`${where}: players join by backfill only while IN_PROGRESS`);
  }
  if (
    payload.mode !== current.mode ||
    payload.region !== current.region ||
    payload.serverRegion !== current.serverRegion
  ) {
    throw inconsistent(`${where}: mode or region changed during the match`);
  }
  const problems = addedParticipantProblems(current.participants, payload.added);
  const participants = canonicalRoster([...current.participants, ...payload.added]);
  if (
    problems.length > 0 ||
    participantProblems(payload.participants).length > 0 ||
    !sameRoster(canonicalRoster(payload.participants), participants)
  ) {
    throw inconsistent(`${where}: the roster is not the earlier one with the added players`, {
      problems,
    });
  }
  if (
    !sameIdSet(
      event.playerIds,
      participants.map((p) => p.playerId),
    )
  ) {
    throw inconsistent(`${where}: playerIds are not exactly the participants`);
  }
  return Object.freeze({ ...current, revision, participants });
}

/** Absent until a server registered; then kept, never changed (it may first appear at any state). */
function expectServerRegion(
  where: string,
  current: MatchSnapshot | undefined,
  payload: MatchStateChangedPayload,
): string | undefined {
  const known = current?.serverRegion;
  if (payload.serverRegion === undefined) {
    if (known !== undefined) throw inconsistent(`${where}: serverRegion ${known} disappeared`);
    return undefined;
  }
  if (!isLabel(payload.serverRegion))
    throw inconsistent(`${where}: serverRegion must be a 1-64 character name`);
  if (known !== undefined && known !== payload.serverRegion)
    throw inconsistent(`${where}: serverRegion changed during the match`);
  return payload.serverRegion;
}

type MatchIdentity = Pick<MatchSnapshot, 'id' | 'mode' | 'region' | 'participants'>;

function creation(
  where: string,
  event: HistoryEvent<typeof MATCH_STATE_CHANGED, MatchStateChangedPayload>,
): MatchIdentity {
  const { payload } = event;
  if (payload.from !== null || !MATCH_INITIAL_STATES.includes(payload.to)) {
    throw inconsistent(
      `${where}: a match history starts with null -> ALLOCATING or AWAITING_ACCEPTANCE, not ${String(payload.from)} -> ${payload.to}`,
    );
  }
  const problems = participantProblems(payload.participants);
  if (!isUuid(event.aggregateId)) problems.push('aggregateId must be a canonical lowercase uuid');
  if (!isLabel(payload.mode)) problems.push('mode must be a 1-64 character name');
  if (!isLabel(payload.region)) problems.push('region must be a 1-64 character name');
  if (problems.length > 0) throw inconsistent(`${where}: ${problems.join('; ')}`, { problems });
  return {
    id: event.aggregateId,
    mode: payload.mode,
    region: payload.region,
    participants: canonicalRoster(payload.participants),
  };
}

function continuation(
  where: string,
  current: MatchSnapshot,
  payload: MatchStateChangedPayload,
): MatchIdentity {
  if (payload.from !== current.state) {
    throw inconsistent(
      `${where}: says it left ${String(payload.from)}, but the match was ${current.state}`,
    );
  }
  if (!canTransitionMatch(current.state, payload.to)) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `${where}: ${current.state} -> ${payload.to} is not a legal transition`,
      { aggregateType: 'match', aggregateId: current.id, from: current.state, to: payload.to },
    );
  }
  if (payload.mode !== current.mode || payload.region !== current.region) {
    throw inconsistent(`${where}: mode or region changed during the match`);
  }
  if (
    participantProblems(payload.participants).length > 0 ||
    !sameRoster(canonicalRoster(payload.participants), canonicalRoster(current.participants))
  ) {
    throw inconsistent(`${where}: the participants changed during the match`);
  }
  return current;
}

function expectReason(
  where: string,
  payload: MatchStateChangedPayload,
): MatchEndReason | undefined {
  const allowed = matchReasonsFor(payload.to);
  if (allowed.length === 0) {
    if (payload.reason !== undefined)
      throw inconsistent(`${where}: ${payload.to} carries no reason`);
    return undefined;
  }
  if (payload.reason === undefined || !allowed.includes(payload.reason)) {
    throw inconsistent(`${where}: ${payload.to} needs a reason out of ${allowed.join(', ')}`);
  }
  return payload.reason;
}

function sameRoster(
  left: readonly MatchParticipant[],
  right: readonly MatchParticipant[],
): boolean {
  return (
    left.length === right.length &&
    left.every((participant, index) => {
      const other = right[index];
      return (
        other !== undefined &&
        participant.playerId === other.playerId &&
        participant.ticketId === other.ticketId &&
        participant.team === other.team
      );
    })
  );
}

/** The match's state after `event` (a participants-added or presence event leaves it as it was). */
export function matchStateAfter(event: Pick<MatchHistoryEvent, 'payload'>): MatchState {
  return 'to' in event.payload ? event.payload.to : event.payload.state;
}
