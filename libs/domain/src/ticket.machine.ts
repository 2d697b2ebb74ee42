import { DomainError, DomainErrorCode } from './domain.error';

export const TICKET_STATES = [
  'SEARCHING',
  'MATCHED',
  'ASSIGNED',
  'CONNECTED',
  'COMPLETED',
  'CANCELLED',
  'EXPIRED',
  'FAILED',
] as const;
export type TicketState = (typeof TICKET_STATES)[number];

export const LIVE_TICKET_STATES: ReadonlySet<TicketState> = new Set(['SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED']);

const ALLOWED: Record<TicketState, readonly TicketState[]> = {
  SEARCHING: ['MATCHED', 'CANCELLED', 'EXPIRED', 'FAILED'],
  // Back to SEARCHING: the match failed before ASSIGNMENT_READY for a reason no player caused.
  MATCHED: ['ASSIGNED', 'SEARCHING', 'CANCELLED', 'FAILED'],
  ASSIGNED: ['CONNECTED', 'SEARCHING', 'CANCELLED', 'FAILED'],
  CONNECTED: ['COMPLETED', 'FAILED', 'CANCELLED'],
  COMPLETED: [],
  CANCELLED: [],
  EXPIRED: [],
  FAILED: [],
};

export function canTransitionTicket(from: TicketState, to: TicketState): boolean {
  return ALLOWED[from].includes(to);
}

export interface TicketSnapshot {
  id: string;
  playerId: string;
  mode: string;
  state: TicketState;
  revision: number;
  /** Kept across a requeue, so a ticket keeps its priority. */
  enqueuedAt: Date;
  matchId?: string;
}

export interface TicketStateChanged {
  type: 'ticket.state_changed';
  ticketId: string;
  playerId: string;
  revision: number;
  from: TicketState | null;
  to: TicketState;
  mode: string;
  matchId?: string;
  reason?: string;
  occurredAt: Date;
}

export interface TicketChange {
  ticket: TicketSnapshot;
  events: TicketStateChanged[];
}

export function createTicket(input: { id: string; playerId: string; mode: string }, now: Date): TicketChange {
  const ticket: TicketSnapshot = { ...input, state: 'SEARCHING', revision: 1, enqueuedAt: now };
  return { ticket, events: [ticketChanged(ticket, null, now)] };
}

export function transitionTicket(
  ticket: TicketSnapshot,
  to: TicketState,
  now: Date,
  options: { matchId?: string; reason?: string } = {},
): TicketChange {
  if (!canTransitionTicket(ticket.state, to)) {
    throw new DomainError(DomainErrorCode.ILLEGAL_TRANSITION, `ticket ${ticket.id} cannot go from ${ticket.state} to ${to}`);
  }
  const matchId = to === 'SEARCHING' ? undefined : (options.matchId ?? ticket.matchId);
  const next: TicketSnapshot = { ...ticket, state: to, revision: ticket.revision + 1 };
  if (matchId === undefined) delete next.matchId;
  else next.matchId = matchId;
  return { ticket: next, events: [ticketChanged(next, ticket.state, now, options.reason)] };
}

function ticketChanged(ticket: TicketSnapshot, from: TicketState | null, now: Date, reason?: string): TicketStateChanged {
  return {
    type: 'ticket.state_changed',
    ticketId: ticket.id,
    playerId: ticket.playerId,
    revision: ticket.revision,
    from,
    to: ticket.state,
    mode: ticket.mode,
    ...(ticket.matchId !== undefined ? { matchId: ticket.matchId } : {}),
    ...(reason !== undefined ? { reason } : {}),
    occurredAt: now,
  };
}
