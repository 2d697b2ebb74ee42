export const TicketState = {
  SEARCHING: 'SEARCHING',
  MATCHED: 'MATCHED',
  ASSIGNED: 'ASSIGNED',
  CONNECTED: 'CONNECTED',
  COMPLETED: 'COMPLETED',
  CANCELLED: 'CANCELLED',
  EXPIRED: 'EXPIRED',
  FAILED: 'FAILED',
} as const;
export type TicketState = (typeof TicketState)[keyof typeof TicketState];

/** In lifecycle order. */
export const TICKET_STATES: readonly TicketState[] = Object.values(TicketState);

export type TerminalTicketState = 'COMPLETED' | 'CANCELLED' | 'EXPIRED' | 'FAILED';
/** The states in which a ticket belongs to a match. */
export type MatchedTicketState = 'MATCHED' | 'ASSIGNED' | 'CONNECTED';

/** The states in which a player holds its one live ticket (the partial unique index of queue_tickets). */
export const LIVE_TICKET_STATES: ReadonlySet<TicketState> = new Set<TicketState>([
  'SEARCHING',
  'MATCHED',
  'ASSIGNED',
  'CONNECTED',
]);

/** Why a ticket ended or went back to the queue. Add codes, never repurpose one. */
export const TicketReason = {
  /** The player cancelled the ticket. */
  PLAYER_CANCELLED: 'PLAYER_CANCELLED',
  /** The ticket's match was cancelled. */
  MATCH_CANCELLED: 'MATCH_CANCELLED',
  /** The player stopped heartbeating while searching. */
  HEARTBEAT_TIMEOUT: 'HEARTBEAT_TIMEOUT',
  /** The player held an assignment and never connected. */
  NO_SHOW: 'NO_SHOW',
  /** The ticket's match failed (a requeue says so too: the ticket is back because of it). */
  MATCH_FAILED: 'MATCH_FAILED',
  /** Another member of the ticket's party cancelled its ticket: a party searches whole or not at all. */
  PARTY_MEMBER_CANCELLED: 'PARTY_MEMBER_CANCELLED',
  /** Another member of the ticket's party stopped heartbeating: the whole party left the queue. */
  PARTY_MEMBER_EXPIRED: 'PARTY_MEMBER_EXPIRED',
  /** The ticket searched for longer than its mode's search timeout (its party with it). */
  SEARCH_TIMED_OUT: 'SEARCH_TIMED_OUT',
  /** An operator released the player's ticket (the player was stuck, or is being removed from play). */
  OPERATOR_RELEASED: 'OPERATOR_RELEASED',
  /**
   * A backfill added the ticket to a running match, then was cancelled before the player got in
   * (by the server, unaccepted in time, or the match ended): the ticket searches again.
   */
  BACKFILL_CANCELLED: 'BACKFILL_CANCELLED',
  /** The player declined its match's ready check (a cooldown follows). */
  ACCEPTANCE_DECLINED: 'ACCEPTANCE_DECLINED',
  /** The player did not answer its match's ready check in time (a cooldown follows). */
  ACCEPTANCE_TIMEOUT: 'ACCEPTANCE_TIMEOUT',
  /** The player left its running match and did not rejoin in time (a cooldown and a rated loss follow). */
  ABANDONED: 'ABANDONED',
  /**
   * A rule set version activated while the ticket searched no longer takes it (an attribute value
   * it no longer declares, a party larger than the mode's teams): queue again under the new rules.
   */
  RULES_CHANGED: 'RULES_CHANGED',
} as const;
export type TicketReason = (typeof TicketReason)[keyof typeof TicketReason];

/**
 * MATCHED/ASSIGNED -> SEARCHING is the requeue after a match fails before ASSIGNMENT_READY for a
 * reason no player caused. EXPIRED is only for searching tickets: once matched, a silent player
 * is the match's problem (a no-show), not the queue's.
 */
const TICKET_EXITS: Readonly<Record<TicketState, readonly TicketState[]>> = {
  SEARCHING: ['MATCHED', 'CANCELLED', 'EXPIRED'],
  MATCHED: ['ASSIGNED', 'SEARCHING', 'CANCELLED', 'FAILED'],
  ASSIGNED: ['CONNECTED', 'SEARCHING', 'CANCELLED', 'FAILED'],
  CONNECTED: ['COMPLETED', 'CANCELLED', 'FAILED'],
  COMPLETED: [],
  CANCELLED: [],
  EXPIRED: [],
  FAILED: [],
};

export function isTicketState(value: unknown): value is TicketState {
  return typeof value === 'string' && (TICKET_STATES as readonly string[]).includes(value);
}

export function isTicketReason(value: unknown): value is TicketReason {
  return typeof value === 'string' && (Object.values(TicketReason) as string[]).includes(value);
}

export function isTerminalTicketState(state: TicketState): state is TerminalTicketState {
  return TICKET_EXITS[state].length === 0;
}

export function isMatchedTicketState(state: TicketState): state is MatchedTicketState {
  return state === 'MATCHED' || state === 'ASSIGNED' || state === 'CONNECTED';
}

export function ticketExits(from: TicketState): readonly TicketState[] {
  return TICKET_EXITS[from];
}

export function canTransitionTicket(from: TicketState, to: TicketState): boolean {
  return TICKET_EXITS[from].includes(to);
}

/**
 * The reasons an event from `from` (null: the creation) into `to` may carry; empty means it
 * carries none, otherwise exactly one of them is required.
 */
export function ticketReasonsFor(
  from: TicketState | null,
  to: TicketState,
): readonly TicketReason[] {
  if (from === null) return [];
  switch (to) {
    case 'CANCELLED':
      if (from === 'MATCHED')
        // A ready check is answered while the ticket is MATCHED, before any assignment.
        return ['PLAYER_CANCELLED', 'MATCH_CANCELLED', 'OPERATOR_RELEASED', 'ACCEPTANCE_DECLINED'];
      return isMatchedTicketState(from)
        ? ['PLAYER_CANCELLED', 'MATCH_CANCELLED', 'OPERATOR_RELEASED']
        : ['PLAYER_CANCELLED', 'PARTY_MEMBER_CANCELLED', 'OPERATOR_RELEASED', 'RULES_CHANGED'];
    case 'EXPIRED':
      return ['HEARTBEAT_TIMEOUT', 'PARTY_MEMBER_EXPIRED', 'SEARCH_TIMED_OUT'];
    case 'FAILED':
      return from === 'ASSIGNED'
        ? ['NO_SHOW', 'MATCH_FAILED']
        : from === 'MATCHED'
          ? ['MATCH_FAILED', 'ACCEPTANCE_TIMEOUT']
          : ['MATCH_FAILED', 'ABANDONED'];
    case 'SEARCHING':
      return ['MATCH_FAILED', 'BACKFILL_CANCELLED', 'MATCH_CANCELLED'];
    case 'MATCHED':
    case 'ASSIGNED':
    case 'CONNECTED':
    case 'COMPLETED':
      return [];
  }
}

/**
 * Whether a `ticket.state_changed` from `from` into `to` names a match: the one joined on
 * MATCHED, otherwise the one the ticket held before the transition (a requeue names the match it
 * left).
 */
export function ticketEventHasMatch(from: TicketState | null, to: TicketState): boolean {
  return to === 'MATCHED' || (from !== null && isMatchedTicketState(from));
}
