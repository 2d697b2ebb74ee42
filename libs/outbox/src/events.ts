import {
  BACKFILL_STATE_CHANGED,
  MATCH_PARTICIPANTS_ADDED,
  MATCH_PRESENCE_CHANGED,
  MATCH_STATE_CHANGED,
  RATING_UPDATED,
  TICKET_STATE_CHANGED,
  type AggregateType,
  type BackfillStateChangedPayload,
  type DomainEventName,
  type MatchParticipantsAddedPayload,
  type MatchPresenceChangedPayload,
  type MatchStateChangedPayload,
  type RatingUpdatedPayload,
  type TicketStateChangedPayload,
} from '@matchplane/domain';

/**
 * Every event type an outbox row may carry. The dispatcher refuses to start while one has no
 * subscriber, and the builder refuses any other.
 */
export const EVENT_TYPES = [
  MATCH_STATE_CHANGED,
  MATCH_PARTICIPANTS_ADDED,
  MATCH_PRESENCE_CHANGED,
  TICKET_STATE_CHANGED,
  RATING_UPDATED,
  BACKFILL_STATE_CHANGED,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The aggregate each event type belongs to: its `aggregate_id` is that aggregate's id. */
export const AGGREGATE_TYPE_OF = {
  'match.state_changed': 'match',
  'ticket.state_changed': 'ticket',
  'rating.updated': 'player',
  'match.participants_added': 'match',
  'match.presence_changed': 'match',
  'backfill.state_changed': 'backfill',
} as const satisfies Record<EventType, AggregateType>;
export type AggregateTypeOf<E extends EventType> = (typeof AGGREGATE_TYPE_OF)[E];

/** The payload of each event type: the discriminated union of envelopes is keyed on these. */
export interface EventPayloads {
  'match.state_changed': MatchStateChangedPayload;
  'ticket.state_changed': TicketStateChangedPayload;
  'rating.updated': RatingUpdatedPayload;
  'match.participants_added': MatchParticipantsAddedPayload;
  'match.presence_changed': MatchPresenceChangedPayload;
  'backfill.state_changed': BackfillStateChangedPayload;
}

type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// A domain event without a registered type (or the reverse) fails to compile here.
const _registryMatchesDomain: [
  SameKeys<EventType, DomainEventName>,
  SameKeys<EventType, keyof EventPayloads>,
] = [true, true];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
