import type { BackfillStateChanged } from './backfill/backfill';
import type { MatchParticipantsAdded, MatchStateChanged } from './match/match.events';
import type { MatchPresenceChanged } from './match/match-presence';
import type { RatingUpdated } from './rating/rating.events';
import type { TicketStateChanged } from './ticket/ticket.events';

/** Every event a libs/domain transition can return, keyed by `event`. */
export type DomainEvent =
  | MatchStateChanged
  | MatchParticipantsAdded
  | MatchPresenceChanged
  | TicketStateChanged
  | RatingUpdated
  | BackfillStateChanged;
export type DomainEventName = DomainEvent['event'];
