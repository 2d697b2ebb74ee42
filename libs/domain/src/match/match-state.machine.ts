export const MatchState = {
  /** A ready check: created for a mode with an acceptance timeout, waiting for every player. */
  AWAITING_ACCEPTANCE: 'AWAITING_ACCEPTANCE',
  ALLOCATING: 'ALLOCATING',
  PROCESS_READY: 'PROCESS_READY',
  ASSIGNMENT_READY: 'ASSIGNMENT_READY',
  IN_PROGRESS: 'IN_PROGRESS',
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  CANCELLED: 'CANCELLED',
} as const;
export type MatchState = (typeof MatchState)[keyof typeof MatchState];

/** In lifecycle order. */
export const MATCH_STATES: readonly MatchState[] = Object.values(MatchState);

export type TerminalMatchState = 'COMPLETED' | 'FAILED' | 'CANCELLED';
export type LiveMatchState = Exclude<MatchState, TerminalMatchState>;

export const TERMINAL_MATCH_STATES: ReadonlySet<MatchState> = new Set<MatchState>([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
]);

/** Why a match FAILED. Add codes, never repurpose one: clients and penalties switch on them. */
export const MatchFailureReason = {
  /** The provider could not allocate a game server. */
  ALLOCATION_FAILED: 'ALLOCATION_FAILED',
  /** The allocated server never registered in time. */
  SERVER_REGISTRATION_TIMEOUT: 'SERVER_REGISTRATION_TIMEOUT',
  /** The server stopped answering or crashed. */
  SERVER_LOST: 'SERVER_LOST',
  /** The server reported the match as failed. */
  SERVER_REPORTED_FAILURE: 'SERVER_REPORTED_FAILURE',
  /** Reconciliation found the match stuck in a state past its deadline. */
  LIFECYCLE_TIMEOUT: 'LIFECYCLE_TIMEOUT',
  /** A participant never connected to the server. */
  NO_SHOW: 'NO_SHOW',
  /** A participant left (cancelled or lost its ticket) before the match could start. */
  PARTICIPANT_LEFT: 'PARTICIPANT_LEFT',
} as const;
export type MatchFailureReason = (typeof MatchFailureReason)[keyof typeof MatchFailureReason];

/** Why a match was CANCELLED. */
export const MatchCancelReason = {
  OPERATOR_CANCELLED: 'OPERATOR_CANCELLED',
  SERVER_CANCELLED: 'SERVER_CANCELLED',
  /** A player declined the ready check. */
  ACCEPTANCE_DECLINED: 'ACCEPTANCE_DECLINED',
  /** The ready check's deadline passed before every player accepted. */
  ACCEPTANCE_TIMEOUT: 'ACCEPTANCE_TIMEOUT',
} as const;
export type MatchCancelReason = (typeof MatchCancelReason)[keyof typeof MatchCancelReason];

export type MatchEndReason = MatchFailureReason | MatchCancelReason;

const MATCH_EXITS: Readonly<Record<MatchState, readonly MatchState[]>> = {
  AWAITING_ACCEPTANCE: ['ALLOCATING', 'FAILED', 'CANCELLED'],
  ALLOCATING: ['PROCESS_READY', 'FAILED', 'CANCELLED'],
  PROCESS_READY: ['ASSIGNMENT_READY', 'FAILED', 'CANCELLED'],
  ASSIGNMENT_READY: ['IN_PROGRESS', 'FAILED', 'CANCELLED'],
  IN_PROGRESS: ['COMPLETED', 'FAILED', 'CANCELLED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
};

export function isMatchState(value: unknown): value is MatchState {
  return typeof value === 'string' && (MATCH_STATES as readonly string[]).includes(value);
}

export function isMatchEndReason(value: unknown): value is MatchEndReason {
  return (
    typeof value === 'string' &&
    ((Object.values(MatchFailureReason) as string[]).includes(value) ||
      (Object.values(MatchCancelReason) as string[]).includes(value))
  );
}

export function isTerminalMatchState(state: MatchState): state is TerminalMatchState {
  return MATCH_EXITS[state].length === 0;
}

/** The states `from` may move to, in the order of the lifecycle. */
export function matchExits(from: MatchState): readonly MatchState[] {
  return MATCH_EXITS[from];
}

export function canTransitionMatch(from: MatchState, to: MatchState): boolean {
  return MATCH_EXITS[from].includes(to);
}

/** The reasons an event entering `to` may carry; empty means it carries none, otherwise one is required. */
export function matchReasonsFor(to: MatchState): readonly MatchEndReason[] {
  switch (to) {
    case 'FAILED':
      return Object.values(MatchFailureReason);
    case 'CANCELLED':
      return Object.values(MatchCancelReason);
    case 'AWAITING_ACCEPTANCE':
    case 'ALLOCATING':
    case 'PROCESS_READY':
    case 'ASSIGNMENT_READY':
    case 'IN_PROGRESS':
    case 'COMPLETED':
      return [];
  }
}

/**
 * Whether a failure was a player's doing. A match that fails before ASSIGNMENT_READY for a reason
 * no player caused puts its tickets back in the queue.
 */
/** The states a match may be created in: AWAITING_ACCEPTANCE only for a mode with a ready check. */
export const MATCH_INITIAL_STATES: readonly MatchState[] = ['AWAITING_ACCEPTANCE', 'ALLOCATING'];

export function isPlayerCausedFailure(reason: MatchFailureReason): boolean {
  switch (reason) {
    case 'NO_SHOW':
    case 'PARTICIPANT_LEFT':
      return true;
    case 'ALLOCATION_FAILED':
    case 'SERVER_REGISTRATION_TIMEOUT':
    case 'SERVER_LOST':
    case 'SERVER_REPORTED_FAILURE':
    case 'LIFECYCLE_TIMEOUT':
      return false;
  }
}

/** Before ASSIGNMENT_READY no player has been handed a server to join, so a requeue costs them nothing. */
export function matchFailureAllowsRequeue(
  failedFrom: MatchState,
  reason: MatchFailureReason,
): boolean {
  return (
    (failedFrom === 'AWAITING_ACCEPTANCE' ||
      failedFrom === 'ALLOCATING' ||
      failedFrom === 'PROCESS_READY') &&
    !isPlayerCausedFailure(reason)
  );
}
