import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { stateChangeEnvelope, type DomainEventOf } from '../shared/domain.event';
import { FIRST_REVISION, nextRevision } from '../shared/revision';
import { assertNow, isLabel, isUuid } from '../shared/value.guards';

/**
 * A game server's request to fill open places on one team of its running match (issue 14):
 * OPEN until the matcher adds players (MATCHED), the allocator publishes a roster revision
 * carrying them (PUBLISHED), the server verifies and accepts it and the players are told to
 * connect (ASSIGNED), and the server reports who came (FILLED). EXPIRED: nobody fitting was
 * found in time. CANCELLED: by the server, because the match ended, or because a filled
 * request was never accepted in time (the added players go back to the queue).
 */
export const BackfillState = {
  OPEN: 'OPEN',
  MATCHED: 'MATCHED',
  PUBLISHED: 'PUBLISHED',
  ASSIGNED: 'ASSIGNED',
  FILLED: 'FILLED',
  CANCELLED: 'CANCELLED',
  EXPIRED: 'EXPIRED',
} as const;
export type BackfillState = (typeof BackfillState)[keyof typeof BackfillState];
export const BACKFILL_STATES: readonly BackfillState[] = Object.values(BackfillState);
/** The states of a request still under way: at most one per team (a unique index). */
export const LIVE_BACKFILL_STATES: readonly BackfillState[] = [
  'OPEN',
  'MATCHED',
  'PUBLISHED',
  'ASSIGNED',
];

/** Why a request was CANCELLED or EXPIRED. Add codes, never repurpose one. */
export const BackfillReason = {
  /** The game server cancelled it. */
  SERVER_CANCELLED: 'SERVER_CANCELLED',
  /** The match ended before the request finished. */
  MATCH_ENDED: 'MATCH_ENDED',
  /** Players were added but the server did not accept the roster revision before the deadline. */
  NOT_ACCEPTED: 'NOT_ACCEPTED',
  /** Nobody who fits the team was found before the deadline. */
  TIMED_OUT: 'TIMED_OUT',
} as const;
export type BackfillReason = (typeof BackfillReason)[keyof typeof BackfillReason];

const BACKFILL_EXITS: Readonly<Record<BackfillState, readonly BackfillState[]>> = {
  OPEN: ['MATCHED', 'CANCELLED', 'EXPIRED'],
  MATCHED: ['PUBLISHED', 'CANCELLED'],
  PUBLISHED: ['ASSIGNED', 'CANCELLED'],
  ASSIGNED: ['FILLED', 'CANCELLED'],
  FILLED: [],
  CANCELLED: [],
  EXPIRED: [],
};

const BACKFILL_REASONS: Readonly<Partial<Record<BackfillState, readonly BackfillReason[]>>> = {
  CANCELLED: ['SERVER_CANCELLED', 'MATCH_ENDED', 'NOT_ACCEPTED'],
  EXPIRED: ['TIMED_OUT'],
};

export function isBackfillState(value: unknown): value is BackfillState {
  return typeof value === 'string' && (BACKFILL_STATES as readonly string[]).includes(value);
}

export function canTransitionBackfill(from: BackfillState, to: BackfillState): boolean {
  return BACKFILL_EXITS[from].includes(to);
}

export function isTerminalBackfillState(state: BackfillState): boolean {
  return BACKFILL_EXITS[state].length === 0;
}

/** The reasons entering `state` takes (one is required); empty when it takes none. */
export function backfillReasonsFor(state: BackfillState): readonly BackfillReason[] {
  return BACKFILL_REASONS[state] ?? [];
}

export const BACKFILL_STATE_CHANGED = 'backfill.state_changed';

export interface BackfillStateChangedPayload {
  readonly requestId: string;
  readonly matchId: string;
  readonly mode: string;
  readonly team: number;
  readonly slots: number;
  readonly from: BackfillState | null;
  readonly to: BackfillState;
  /** Present exactly when `to` is CANCELLED or EXPIRED. */
  readonly reason?: BackfillReason;
  /** The players the matcher added, ascending (empty while OPEN). */
  readonly playerIds: readonly string[];
  /** The roster revision carrying them, from PUBLISHED on. */
  readonly rosterRevision?: number;
  /** ISO-8601 instant: the request's deadline. */
  readonly expiresAt: string;
}

export type BackfillStateChanged = DomainEventOf<
  typeof BACKFILL_STATE_CHANGED,
  'backfill',
  BackfillStateChangedPayload
>;

export interface BackfillSnapshot {
  readonly id: string;
  readonly matchId: string;
  readonly mode: string;
  readonly team: number;
  readonly slots: number;
  readonly state: BackfillState;
  readonly reason?: BackfillReason;
  readonly revision: number;
  readonly playerIds: readonly string[];
  readonly rosterRevision?: number;
  readonly expiresAt: Date;
  readonly stateChangedAt: Date;
}

export interface NewBackfill {
  readonly id: string;
  readonly matchId: string;
  readonly mode: string;
  readonly team: number;
  readonly slots: number;
  readonly expiresAt: Date;
}

export type BackfillCommand =
  | { readonly to: 'MATCHED'; readonly playerIds: readonly string[] }
  | { readonly to: 'PUBLISHED'; readonly rosterRevision: number }
  | { readonly to: 'ASSIGNED' | 'FILLED' }
  | { readonly to: 'CANCELLED' | 'EXPIRED'; readonly reason: BackfillReason };

export interface BackfillChange {
  readonly request: BackfillSnapshot;
  readonly events: readonly BackfillStateChanged[];
}

/** The most places one request may ask for (the largest team a mode may have). */
export const MAX_BACKFILL_SLOTS = 64;

function invalid(message: string, details: Record<string, unknown>): DomainError {
  return new DomainError(DomainErrorCode.INVALID_ARGUMENT, message, details);
}

/**
 * A new request: OPEN at revision 1, announced by a `backfill.state_changed` from null.
 * `audience`: the match's players, whom every event of the request concerns (with the players it
 * adds).
 */
export function openBackfill(
  input: NewBackfill,
  now: Date,
  audience: readonly string[],
): BackfillChange {
  assertNow(now);
  const problems: string[] = [];
  if (!isUuid(input.id)) problems.push('id must be a canonical lowercase uuid');
  if (!isUuid(input.matchId)) problems.push('matchId must be a canonical lowercase uuid');
  if (!isLabel(input.mode)) problems.push('mode must be a 1-64 character name');
  if (!Number.isSafeInteger(input.team) || input.team < 0) problems.push('team must be >= 0');
  if (!Number.isSafeInteger(input.slots) || input.slots < 1 || input.slots > MAX_BACKFILL_SLOTS) {
    problems.push(`slots must be an integer from 1 to ${MAX_BACKFILL_SLOTS}`);
  }
  if (!(input.expiresAt.getTime() > now.getTime())) problems.push('expiresAt must be after now');
  if (problems.length > 0) {
    throw invalid(`invalid backfill request: ${problems.join('; ')}`, {
      requestId: input.id,
      problems,
    });
  }
  const request: BackfillSnapshot = Object.freeze({
    ...input,
    state: 'OPEN',
    revision: FIRST_REVISION,
    playerIds: Object.freeze([]),
    expiresAt: new Date(input.expiresAt.getTime()),
    stateChangedAt: new Date(now.getTime()),
  });
  return Object.freeze({
    request,
    events: Object.freeze([stateChanged(request, null, audience)]),
  });
}

/** The snapshot after `command` (revision + 1) and its event; throws on an illegal one. */
export function transitionBackfill(
  request: BackfillSnapshot,
  command: BackfillCommand,
  now: Date,
  audience: readonly string[],
): BackfillChange {
  assertNow(now);
  if (!canTransitionBackfill(request.state, command.to)) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `backfill request ${request.id} cannot go from ${request.state} to ${command.to}`,
      { aggregateType: 'backfill', aggregateId: request.id, from: request.state, to: command.to },
    );
  }
  let { playerIds, rosterRevision } = request;
  let reason: BackfillReason | undefined;
  switch (command.to) {
    case 'MATCHED':
      if (command.playerIds.length !== request.slots || !command.playerIds.every(isUuid)) {
        throw invalid(
          `backfill request ${request.id} fills ${request.slots} places, got ${command.playerIds.length} players`,
          { requestId: request.id },
        );
      }
      playerIds = Object.freeze([...command.playerIds].sort());
      break;
    case 'PUBLISHED':
      if (!Number.isSafeInteger(command.rosterRevision) || command.rosterRevision < 2) {
        throw invalid(`a backfill's roster revision is 2 or more`, { requestId: request.id });
      }
      rosterRevision = command.rosterRevision;
      break;
    case 'CANCELLED':
    case 'EXPIRED':
      if (!backfillReasonsFor(command.to).includes(command.reason)) {
        throw invalid(
          `entering ${command.to} needs a reason out of ${backfillReasonsFor(command.to).join(', ')}`,
          { requestId: request.id },
        );
      }
      reason = command.reason;
      break;
    case 'ASSIGNED':
    case 'FILLED':
      break;
  }
  const { reason: _previous, ...rest } = request;
  const next: BackfillSnapshot = Object.freeze({
    ...rest,
    state: command.to,
    revision: nextRevision(request.revision),
    playerIds,
    ...(rosterRevision === undefined ? {} : { rosterRevision }),
    ...(reason === undefined ? {} : { reason }),
    stateChangedAt: new Date(now.getTime()),
  });
  return Object.freeze({
    request: next,
    events: Object.freeze([stateChanged(next, request.state, audience)]),
  });
}

function stateChanged(
  request: BackfillSnapshot,
  from: BackfillState | null,
  audience: readonly string[],
): BackfillStateChanged {
  return Object.freeze({
    event: BACKFILL_STATE_CHANGED,
    ...stateChangeEnvelope('backfill', request),
    // The match's players and the added ones: whom the request concerns.
    playerIds: Object.freeze([...new Set([...audience, ...request.playerIds])].sort()),
    payload: Object.freeze({
      requestId: request.id,
      matchId: request.matchId,
      mode: request.mode,
      team: request.team,
      slots: request.slots,
      from,
      to: request.state,
      ...(request.reason === undefined ? {} : { reason: request.reason }),
      playerIds: request.playerIds,
      ...(request.rosterRevision === undefined ? {} : { rosterRevision: request.rosterRevision }),
      expiresAt: request.expiresAt.toISOString(),
    }),
  });
}
