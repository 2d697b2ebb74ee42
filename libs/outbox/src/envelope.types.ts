import type { AggregateTypeOf, EventPayloads, EventType } from './events';

export const INT64_MAX = 2n ** 63n - 1n;

/**
 * An int64 revision >= 1: a number whenever it is a safe integer (every real aggregate), a bigint
 * only beyond 2^53 - 1, so the builder and the delivery-side parser agree on one form and an
 * envelope compares equal to itself read back.
 */
export type Revision = number | bigint;

type EnvelopeOfEvent<E extends EventType> = E extends EventType
  ? {
      readonly event: E;
      readonly aggregateType: AggregateTypeOf<E>;
      /** Canonical lowercase uuid of the aggregate. */
      readonly aggregateId: string;
      readonly revision: Revision;
      /** A copy: freezing cannot stop Date#setTime, so no caller shares this one. */
      readonly occurredAt: Date;
      /** Every player the event concerns (for a match: every participant, no-shows included), each once. */
      readonly playerIds: readonly string[];
      /** Validated against its event type's schema, deep-frozen. */
      readonly payload: EventPayloads[E];
    }
  : never;

/** A validated, frozen outbox envelope, discriminated by `event`. */
export type OutboxEnvelope<E extends EventType = EventType> = EnvelopeOfEvent<E>;

/**
 * What a writer hands to {@link buildEnvelope}: the envelope's fields, typed as the built one's
 * (which is a frozen copy); a libs/domain event is one as it is. Runtime checks still apply,
 * because a value typed right can be wrong.
 */
export type EnvelopeInput<E extends EventType = EventType> = OutboxEnvelope<E>;

/** An outbox row's envelope columns as pg returns them: all unknown (rows may predate this code). */
export interface StoredEnvelope {
  readonly event: unknown;
  readonly aggregate_type: unknown;
  readonly aggregate_id: unknown;
  readonly revision: unknown;
  readonly occurred_at: unknown;
  readonly player_ids: unknown;
  readonly payload: unknown;
}
