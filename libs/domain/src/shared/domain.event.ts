export const AggregateType = {
  MATCH: 'match',
  TICKET: 'ticket',
  PLAYER: 'player',
  BACKFILL: 'backfill',
} as const;
export type AggregateType = (typeof AggregateType)[keyof typeof AggregateType];

/**
 * What a transition asks to be written to the outbox, field for field the envelope's columns, so
 * the writer turns it into a row with `buildEnvelope` and nothing else to fill in.
 */
export interface DomainEventOf<E extends string, A extends AggregateType, P> {
  readonly event: E;
  readonly aggregateType: A;
  readonly aggregateId: string;
  /** The aggregate's revision after the transition: 1 for its creation. */
  readonly revision: number;
  readonly occurredAt: Date;
  /** Every player the event concerns. */
  readonly playerIds: readonly string[];
  /** JSON-safe: it is stored as jsonb and read back as parsed JSON. */
  readonly payload: P;
}

/**
 * The envelope fields of the event a state change of `aggregate` writes: its id, its revision
 * after the change and when the change happened (a copy of the date: events are frozen, dates are not).
 */
export function stateChangeEnvelope<A extends AggregateType>(
  aggregateType: A,
  aggregate: { readonly id: string; readonly revision: number; readonly stateChangedAt: Date },
): Pick<
  DomainEventOf<string, A, unknown>,
  'aggregateType' | 'aggregateId' | 'revision' | 'occurredAt'
> {
  return {
    aggregateType,
    aggregateId: aggregate.id,
    revision: aggregate.revision,
    occurredAt: new Date(aggregate.stateChangedAt.getTime()),
  };
}
