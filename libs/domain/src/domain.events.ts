import type { MatchStateChanged } from './match/match.events';
import type { TicketStateChanged } from './ticket/ticket.events';

/** Every event a libs/domain transition can return, keyed by `event`. */
export type DomainEvent = MatchStateChanged | TicketStateChanged;
export type DomainEventName = DomainEvent['event'];
