import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { FIRST_REVISION, nextRevision } from '../shared/revision';
import { assertNow, isLabel, isUuid } from '../shared/value.guards';
import {
  MATCH_PARTICIPANTS_ADDED,
  MATCH_STATE_CHANGED,
  type MatchParticipant,
  type MatchParticipantsAdded,
  type MatchStateChanged,
} from './match.events';
import {
  canTransitionMatch,
  isMatchState,
  matchReasonsFor,
  type MatchCancelReason,
  type MatchEndReason,
  type MatchFailureReason,
  type MatchState,
} from './match-state.machine';

export interface MatchSnapshot {
  readonly id: string;
  readonly mode: string;
  readonly region: string;
  /**
   * The region its game server was actually allocated in, from PROCESS_READY on: `region`, or
   * another after the allocator fell back (a full region). Absent before a server registered.
   */
  readonly serverRegion?: string;
  readonly state: MatchState;
  readonly revision: number;
  /** Everyone matched, no-shows included: they stay participants and every event concerns them. */
  readonly participants: readonly MatchParticipant[];
  /** Why the match FAILED or was CANCELLED; absent otherwise. */
  readonly failureReason?: MatchEndReason;
  readonly stateChangedAt: Date;
}

export type MatchCommand =
  /** `serverRegion`: where the registering server runs (set once; a later one must agree). */
  | { readonly to: 'PROCESS_READY'; readonly serverRegion?: string }
  /** ALLOCATING: out of AWAITING_ACCEPTANCE once every player accepted. */
  | { readonly to: 'ALLOCATING' | 'ASSIGNMENT_READY' | 'IN_PROGRESS' | 'COMPLETED' }
  | { readonly to: 'FAILED'; readonly reason: MatchFailureReason }
  | { readonly to: 'CANCELLED'; readonly reason: MatchCancelReason };

export interface NewMatch {
  readonly id: string;
  readonly mode: string;
  readonly region: string;
  readonly participants: readonly MatchParticipant[];
  /** The mode requires a ready check: the match waits in AWAITING_ACCEPTANCE before allocation. */
  readonly awaitingAcceptance?: boolean;
}

export interface MatchChange {
  readonly match: MatchSnapshot;
  readonly events: readonly MatchStateChanged[];
}

/** A new match: ALLOCATING (or AWAITING_ACCEPTANCE) at revision 1, announced by a `match.state_changed` from null. */
export function createMatch(input: NewMatch, now: Date): MatchChange {
  assertNow(now);
  const problems: string[] = [];
  if (!isUuid(input.id)) problems.push('id must be a canonical lowercase uuid');
  if (!isLabel(input.mode)) problems.push('mode must be a 1-64 character name');
  if (!isLabel(input.region)) problems.push('region must be a 1-64 character name');
  problems.push(...participantProblems(input.participants));
  if (problems.length > 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `invalid match: ${problems.join('; ')}`,
      { matchId: input.id, problems },
    );
  }
  const match: MatchSnapshot = Object.freeze({
    id: input.id,
    mode: input.mode,
    region: input.region,
    state: input.awaitingAcceptance === true ? 'AWAITING_ACCEPTANCE' : 'ALLOCATING',
    revision: FIRST_REVISION,
    participants: canonicalRoster(input.participants),
    stateChangedAt: new Date(now.getTime()),
  });
  return Object.freeze({ match, events: Object.freeze([matchStateChanged(match, null)]) });
}

/** The snapshot after `command` (revision + 1) and the event announcing it; throws on an illegal one. */
export function transitionMatch(
  match: MatchSnapshot,
  command: MatchCommand,
  now: Date,
): MatchChange {
  assertNow(now);
  if (!isMatchState(match.state)) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `match ${match.id} has unknown state ${String(match.state)}`,
      { matchId: match.id },
    );
  }
  if (!canTransitionMatch(match.state, command.to)) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `match ${match.id} cannot go from ${match.state} to ${String(command.to)}`,
      { aggregateType: 'match', aggregateId: match.id, from: match.state, to: command.to },
    );
  }
  const reason = commandReason(command);
  const allowed = matchReasonsFor(command.to);
  if (allowed.length > 0 && (reason === undefined || !allowed.includes(reason))) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `entering ${command.to} needs a reason out of ${allowed.join(', ')}, got ${String(reason)}`,
      { matchId: match.id, to: command.to, reason },
    );
  }
  const serverRegion = command.to === 'PROCESS_READY' ? command.serverRegion : undefined;
  if (serverRegion !== undefined) {
    if (!isLabel(serverRegion)) {
      throw new DomainError(
        DomainErrorCode.INVALID_ARGUMENT,
        `serverRegion must be a 1-64 character name, got ${String(serverRegion)}`,
        { matchId: match.id },
      );
    }
    if (match.serverRegion !== undefined && match.serverRegion !== serverRegion) {
      throw new DomainError(
        DomainErrorCode.INVALID_ARGUMENT,
        `match ${match.id} is served from ${match.serverRegion}, not ${serverRegion}`,
        { matchId: match.id },
      );
    }
  }
  const { failureReason: _previous, ...rest } = match;
  const next: MatchSnapshot = Object.freeze({
    ...rest,
    ...(serverRegion === undefined ? {} : { serverRegion }),
    participants: canonicalRoster(match.participants),
    state: command.to,
    revision: nextRevision(match.revision),
    stateChangedAt: new Date(now.getTime()),
    ...(reason === undefined ? {} : { failureReason: reason }),
  });
  return Object.freeze({
    match: next,
    events: Object.freeze([matchStateChanged(next, match.state)]),
  });
}

export interface MatchParticipantsChange {
  readonly match: MatchSnapshot;
  readonly events: readonly MatchParticipantsAdded[];
}

/**
 * A backfill's players join the running match (revision + 1, state unchanged): only while it is
 * IN_PROGRESS, only players and tickets not on the roster yet, each on an existing team.
 */
export function addParticipants(
  match: MatchSnapshot,
  added: readonly MatchParticipant[],
  backfillRequestId: string,
  now: Date,
): MatchParticipantsChange {
  assertNow(now);
  if (match.state !== 'IN_PROGRESS') {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `match ${match.id} is ${match.state}: players join by backfill only while IN_PROGRESS`,
      { aggregateType: 'match', aggregateId: match.id, from: match.state, to: match.state },
    );
  }
  const problems = addedParticipantProblems(match.participants, added);
  if (!isUuid(backfillRequestId)) problems.push('backfillRequestId must be a canonical uuid');
  if (problems.length > 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `invalid backfill of match ${match.id}: ${problems.join('; ')}`,
      { matchId: match.id, problems },
    );
  }
  const next: MatchSnapshot = Object.freeze({
    ...match,
    participants: canonicalRoster([...match.participants, ...added]),
    revision: nextRevision(match.revision),
  });
  const event: MatchParticipantsAdded = Object.freeze({
    event: MATCH_PARTICIPANTS_ADDED,
    ...matchEventEnvelope(next, now),
    payload: Object.freeze({
      matchId: next.id,
      state: next.state,
      ...matchWhereabouts(next),
      added: canonicalRoster(added),
      backfillRequestId,
    }),
  });
  return Object.freeze({ match: next, events: Object.freeze([event]) });
}

/** Problems with players added to a roster: none twice, none already there, teams that exist. */
export function addedParticipantProblems(
  roster: readonly MatchParticipant[],
  added: readonly MatchParticipant[],
): string[] {
  // Typed input, checked as data: the fold hands in payloads read back from JSON.
  const list: unknown = added;
  if (!Array.isArray(list) || list.length === 0) return ['added must be a non-empty list'];
  const problems = participantProblems([...roster, ...added]);
  const teams = new Set(roster.map((p) => p.team));
  for (const participant of added) {
    if (!teams.has(participant.team)) problems.push(`team ${participant.team} is not in the match`);
  }
  return problems;
}

/** Every participant, no-shows included, in roster order. */
export function matchPlayerIds(match: Pick<MatchSnapshot, 'participants'>): readonly string[] {
  return match.participants.map((participant) => participant.playerId);
}

/** The envelope of an event the match at this revision writes: every participant is told. */
export function matchEventEnvelope(
  match: MatchSnapshot,
  occurredAt: Date,
): Pick<
  MatchStateChanged,
  'aggregateType' | 'aggregateId' | 'revision' | 'occurredAt' | 'playerIds'
> {
  return {
    aggregateType: 'match',
    aggregateId: match.id,
    revision: match.revision,
    occurredAt: new Date(occurredAt.getTime()),
    playerIds: Object.freeze([...matchPlayerIds(match)]),
  };
}

/** Where the match plays and who plays it, as every match event's payload states them. */
export function matchWhereabouts(
  match: MatchSnapshot,
): Pick<MatchSnapshot, 'region' | 'serverRegion' | 'mode' | 'participants'> {
  return {
    region: match.region,
    ...(match.serverRegion === undefined ? {} : { serverRegion: match.serverRegion }),
    mode: match.mode,
    participants: match.participants,
  };
}

function matchStateChanged(match: MatchSnapshot, from: MatchState | null): MatchStateChanged {
  return Object.freeze({
    event: MATCH_STATE_CHANGED,
    ...matchEventEnvelope(match, match.stateChangedAt),
    payload: Object.freeze({
      matchId: match.id,
      from,
      to: match.state,
      ...(match.failureReason === undefined ? {} : { reason: match.failureReason }),
      ...matchWhereabouts(match),
    }),
  });
}

function commandReason(command: MatchCommand): MatchEndReason | undefined {
  switch (command.to) {
    case 'FAILED':
    case 'CANCELLED':
      return command.reason;
    case 'ALLOCATING':
    case 'PROCESS_READY':
    case 'ASSIGNMENT_READY':
    case 'IN_PROGRESS':
    case 'COMPLETED':
      return undefined;
  }
}

/** Problems with a roster, each naming the participant's index; empty when it is valid. */
export function participantProblems(participants: readonly MatchParticipant[]): string[] {
  // Typed input, checked as data: the fold hands in rosters read back from JSON.
  const list: unknown = participants;
  if (!Array.isArray(list) || list.length === 0) {
    return ['participants must be a non-empty list'];
  }
  const problems: string[] = [];
  const players = new Set<string>();
  const tickets = new Set<string>();
  (list as unknown[]).forEach((element, index) => {
    const at = `participants[${index}]`;
    if (typeof element !== 'object' || element === null) {
      problems.push(`${at} must be an object`);
      return;
    }
    const participant = element as Partial<Record<keyof MatchParticipant, unknown>>;
    if (!isUuid(participant.playerId))
      problems.push(`${at}.playerId must be a canonical lowercase uuid`);
    else if (players.has(participant.playerId))
      problems.push(`${at}.playerId ${participant.playerId} appears twice`);
    if (!isUuid(participant.ticketId))
      problems.push(`${at}.ticketId must be a canonical lowercase uuid`);
    else if (tickets.has(participant.ticketId))
      problems.push(`${at}.ticketId ${participant.ticketId} appears twice`);
    if (
      typeof participant.team !== 'number' ||
      !Number.isSafeInteger(participant.team) ||
      participant.team < 0
    ) {
      problems.push(`${at}.team must be an integer >= 0`);
    }
    if (isUuid(participant.playerId)) players.add(participant.playerId);
    if (isUuid(participant.ticketId)) tickets.add(participant.ticketId);
  });
  return problems;
}

/**
 * Team, then player id: the order the store reads the roster back in, so a snapshot folded from
 * the events equals the one loaded from the tables.
 */
export function canonicalRoster(
  participants: readonly MatchParticipant[],
): readonly MatchParticipant[] {
  return Object.freeze(
    [...participants]
      .sort(
        (a, b) =>
          a.team - b.team || (a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0),
      )
      .map(({ playerId, ticketId, team }) => Object.freeze({ playerId, ticketId, team })),
  );
}
