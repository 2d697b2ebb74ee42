import type { DomainEventOf } from '../shared/domain.event';
import type { TicketReason, TicketState } from './ticket-state.machine';

export const TICKET_STATE_CHANGED = 'ticket.state_changed';

/** Every change of a ticket's state, from its creation (`from: null`); it concerns its player alone. */
export interface TicketStateChangedPayload {
  readonly ticketId: string;
  readonly from: TicketState | null;
  readonly to: TicketState;
  readonly mode: string;
  /** ISO-8601 (UTC); unchanged by a requeue, so the ticket keeps its place in the queue. */
  readonly enqueuedAt: string;
  /** Present exactly when {@link ticketEventHasMatch}: the match joined, held, or left. */
  readonly matchId?: string;
  /** Present exactly when {@link ticketReasonsFor} lists any. */
  readonly reason?: TicketReason;
}

export type TicketStateChanged = DomainEventOf<
  typeof TICKET_STATE_CHANGED,
  'ticket',
  TicketStateChangedPayload
>;
