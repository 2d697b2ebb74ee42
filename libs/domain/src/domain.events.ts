import type { MatchStateChanged } from './match/match.events';
import type { RatingUpdated } from './rating/rating.events';
import type { TicketStateChanged } from './ticket/ticket.events';

/** Every event a libs/domain transition can return, keyed by `event`. */
export type DomainEvent = MatchStateChanged | TicketStateChanged | RatingUpdated;
export type DomainEventName = DomainEvent['event'];
