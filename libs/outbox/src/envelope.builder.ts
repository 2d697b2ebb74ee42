import { isUuid, isValidDate, type DomainEvent } from '@matchplane/domain';
import { InvalidEnvelopeError } from './envelope.error';
import {
  AGGREGATE_TYPE_OF,
  EVENT_TYPES,
  isEventType,
  type AggregateTypeOf,
  type EventPayloads,
  type EventType,
} from './events';
import { describeValue, payloadProblems, type EnvelopeProblem } from './events.schemas';

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
 * What a writer hands to {@link buildEnvelope}: the envelope's fields, typed; a libs/domain event
 * is one as it is. Runtime checks still apply, because a value typed right can be wrong.
 */
export type EnvelopeInput<E extends EventType = EventType> = E extends EventType
  ? {
      readonly event: E;
      readonly aggregateType: AggregateTypeOf<E>;
      readonly aggregateId: string;
      readonly revision: Revision;
      readonly occurredAt: Date;
      readonly playerIds: readonly string[];
      readonly payload: EventPayloads[E];
    }
  : never;

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

const ENVELOPE_FIELDS = [
  'event',
  'aggregateType',
  'aggregateId',
  'revision',
  'occurredAt',
  'playerIds',
  'payload',
] as const;

/** An occurredAt outside these bounds is a null or a unit mix-up turned into a Date (new Date(0), seconds as ms). */
const EARLIEST_OCCURRED_AT = Date.UTC(2000, 0, 1);
const LATEST_OCCURRED_AT = Date.UTC(10000, 0, 1);

const DECIMAL_INT64 = /^[1-9][0-9]{0,18}$/;

/**
 * The only way to make an outbox row. Checks every field and validates the payload against its
 * event type, then returns a frozen copy; any fault throws {@link InvalidEnvelopeError} listing
 * every problem, inside the writer's transaction, so the state change rolls back with it and no
 * undeliverable row is ever committed.
 *
 * Decisions: `revision` must be a number (a safe integer >= 1) or a bigint within int64; a string
 * is refused here (only a row read back may carry one, see {@link validateEnvelope}). `playerIds`
 * that repeat a player are refused rather than deduplicated: a repeat means the writer built the
 * audience wrong, and that bug should surface, not be papered over.
 */
export function buildEnvelope<E extends EventType>(input: EnvelopeInput<E>): OutboxEnvelope<E> {
  const fields: unknown = input;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
    throw new InvalidEnvelopeError(
      [{ field: 'envelope', message: `must be an object, got ${describeValue(fields)}` }],
      'unreadable',
    );
  }
  const unknownFields = Object.keys(fields)
    .filter((key) => !(ENVELOPE_FIELDS as readonly string[]).includes(key))
    .map((key) => ({ field: key, message: 'is not an envelope field' }));
  const envelope: OutboxEnvelope = checked(input, 'writer', unknownFields);
  return envelope as OutboxEnvelope<E>;
}

/**
 * The delivery side's parser: the same checks as {@link buildEnvelope} on a row read back from
 * PostgreSQL, so a row that a buggy or older writer managed to commit fails its delivery instead
 * of reaching a subscriber. Here, and only here, `revision` may be the decimal string pg returns
 * for int8 (canonical digits, within int64); it comes back as a number when it is a safe integer.
 */
export function validateEnvelope(row: StoredEnvelope): OutboxEnvelope {
  const value: unknown = row;
  if (typeof value !== 'object' || value === null) {
    throw new InvalidEnvelopeError(
      [{ field: 'row', message: `must be an object, got ${describeValue(value)}` }],
      'unreadable',
    );
  }
  return checked(
    {
      event: row.event,
      aggregateType: row.aggregate_type,
      aggregateId: row.aggregate_id,
      revision: row.revision,
      occurredAt: row.occurred_at,
      playerIds: row.player_ids,
      payload: row.payload,
    },
    'driver',
    [],
  );
}

/** The envelope of one domain event, as a transition of libs/domain returned it. */
export function envelopeFor(event: DomainEvent): OutboxEnvelope {
  return buildEnvelope(event);
}

/** The envelopes of everything a transition returned, in order; the first invalid one throws. */
export function envelopesFor(events: readonly DomainEvent[]): OutboxEnvelope[] {
  return events.map((event) => buildEnvelope(event));
}

type RevisionSource = 'writer' | 'driver';

function checked(
  input: Readonly<Record<(typeof ENVELOPE_FIELDS)[number], unknown>>,
  source: RevisionSource,
  problems: EnvelopeProblem[],
): OutboxEnvelope {
  const { event, aggregateType, aggregateId, occurredAt, playerIds, payload } = input;
  const known = isEventType(event);
  if (!known) {
    problems.push({
      field: 'event',
      message: `must be one of ${EVENT_TYPES.join(', ')}, got ${describeValue(event)}`,
    });
  } else if (aggregateType !== AGGREGATE_TYPE_OF[event]) {
    problems.push({
      field: 'aggregateType',
      message: `must be "${AGGREGATE_TYPE_OF[event]}" for ${event}, got ${describeValue(aggregateType)}`,
    });
  }
  if (!isUuid(aggregateId)) {
    problems.push({
      field: 'aggregateId',
      message: `must be a canonical lowercase uuid, got ${describeValue(aggregateId)}`,
    });
  }
  const revision = parseRevision(input.revision, source, problems);
  problems.push(...occurredAtProblems(occurredAt));
  problems.push(...playerIdProblems(playerIds));
  const payloadFaults = known ? payloadProblems(event, payload) : [];
  problems.push(...payloadFaults);
  if (known && payloadFaults.length === 0 && Array.isArray(playerIds)) {
    problems.push(
      ...crossProblems(
        event,
        payload as EventPayloads[EventType],
        aggregateId,
        revision,
        playerIds,
      ),
    );
  }
  if (problems.length > 0 || !known || revision === undefined) {
    throw new InvalidEnvelopeError(
      problems,
      subjectOf(event, aggregateType, aggregateId, input.revision),
    );
  }
  return Object.freeze({
    event,
    aggregateType: AGGREGATE_TYPE_OF[event],
    aggregateId: aggregateId as string,
    revision,
    occurredAt: new Date((occurredAt as Date).getTime()),
    playerIds: Object.freeze([...(playerIds as string[])]),
    payload: deepFreeze(JSON.parse(JSON.stringify(payload)) as EventPayloads[EventType]),
  }) as OutboxEnvelope;
}

/**
 * int64 >= 1, never coerced: -1 (a CTE that matched nothing), 0, 1.5, NaN and anything over int64
 * are errors. A number past 2^53 - 1 is refused too: it may already have been rounded.
 */
function parseRevision(
  value: unknown,
  source: RevisionSource,
  problems: EnvelopeProblem[],
): Revision | undefined {
  const refuse = (message: string): undefined => {
    problems.push({ field: 'revision', message });
    return undefined;
  };
  if (typeof value === 'number') {
    if (!Number.isInteger(value))
      return refuse(`must be an integer >= 1, got ${describeValue(value)}`);
    if (value < 1) {
      return refuse(
        `must be >= 1, got ${value}${value === -1 ? ' (the sentinel of a CTE that matched nothing?)' : ''}`,
      );
    }
    if (!Number.isSafeInteger(value)) {
      return refuse(`${value} is past 2^53 - 1 and may have been rounded; pass a bigint`);
    }
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < 1n) return refuse(`must be >= 1, got bigint ${value}`);
    if (value > INT64_MAX) return refuse(`bigint ${value} overflows int64`);
    return normalized(value);
  }
  if (typeof value === 'string' && source === 'driver') {
    if (!DECIMAL_INT64.test(value) || BigInt(value) > INT64_MAX) {
      return refuse(`must be a decimal int64 >= 1, got ${describeValue(value)}`);
    }
    return normalized(BigInt(value));
  }
  return refuse(
    `must be a number or bigint, got ${describeValue(value)}${typeof value === 'string' ? ' (strings are refused; only a row read back from PostgreSQL carries one)' : ''}`,
  );
}

function normalized(value: bigint): Revision {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

function occurredAtProblems(occurredAt: unknown): EnvelopeProblem[] {
  if (!(occurredAt instanceof Date)) {
    return [{ field: 'occurredAt', message: `must be a Date, got ${describeValue(occurredAt)}` }];
  }
  if (!isValidDate(occurredAt))
    return [{ field: 'occurredAt', message: 'must be a valid Date, got Invalid Date' }];
  const at = occurredAt.getTime();
  if (at < EARLIEST_OCCURRED_AT || at >= LATEST_OCCURRED_AT) {
    return [
      {
        field: 'occurredAt',
        message: `${occurredAt.toISOString()} is outside 2000-01-01..9999-12-31 (a null or a unit mix-up made into a Date?)`,
      },
    ];
  }
  return [];
}

function playerIdProblems(playerIds: unknown): EnvelopeProblem[] {
  if (!Array.isArray(playerIds)) {
    return [
      {
        field: 'playerIds',
        message: `must be a non-empty array of player uuids, got ${describeValue(playerIds)}`,
      },
    ];
  }
  if (playerIds.length === 0) {
    return [
      {
        field: 'playerIds',
        message: 'must name at least one player: an event nobody is told about is a writer bug',
      },
    ];
  }
  const seen = new Set<unknown>();
  return playerIds.flatMap((id: unknown, index) => {
    const field = `playerIds[${index}]`;
    if (!isUuid(id))
      return [{ field, message: `must be a canonical lowercase uuid, got ${describeValue(id)}` }];
    if (seen.has(id)) return [{ field, message: `repeats player ${id}` }];
    seen.add(id);
    return [];
  });
}

/** The payload field that names the event's aggregate, and its value. */
function aggregateIdField(event: EventType, payload: EventPayloads[EventType]): [string, unknown] {
  switch (event) {
    case 'match.state_changed':
    case 'match.participants_added':
    case 'match.presence_changed':
      return ['payload.matchId', (payload as EventPayloads[typeof event]).matchId];
    case 'ticket.state_changed':
      return ['payload.ticketId', (payload as EventPayloads[typeof event]).ticketId];
    case 'rating.updated':
      return ['payload.playerId', (payload as EventPayloads[typeof event]).playerId];
    case 'backfill.state_changed':
      return ['payload.requestId', (payload as EventPayloads[typeof event]).requestId];
  }
}

function crossProblems(
  event: EventType,
  payload: EventPayloads[EventType],
  aggregateId: unknown,
  revision: Revision | undefined,
  playerIds: readonly unknown[],
): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const [idField, payloadId] = aggregateIdField(event, payload);
  if (isUuid(aggregateId) && payloadId !== aggregateId) {
    problems.push({
      field: idField,
      message: `must equal aggregateId ${aggregateId}, got ${String(payloadId)}`,
    });
  }
  // A state change's first revision is its creation; a rating has no creation event.
  if (revision !== undefined && 'from' in payload) {
    const first = revision === 1;
    if (payload.from === null && !first) {
      problems.push({
        field: 'revision',
        message: `must be 1 for a creation (from: null), got ${revision}`,
      });
    } else if (payload.from !== null && first) {
      problems.push({
        field: 'payload.from',
        message: `revision 1 is the creation, so from must be null, got ${payload.from}`,
      });
    }
  }
  switch (event) {
    case 'match.state_changed':
    case 'match.participants_added':
    case 'match.presence_changed': {
      const participants = (payload as EventPayloads[typeof event]).participants.map(
        (p) => p.playerId,
      );
      const addressed = new Set(playerIds);
      const missing = participants.filter((id) => !addressed.has(id));
      const strangers = playerIds.filter((id) => !participants.includes(id as string));
      if (missing.length > 0) {
        problems.push({
          field: 'playerIds',
          message: `must include every participant; missing ${missing.join(', ')}`,
        });
      }
      if (strangers.length > 0) {
        problems.push({
          field: 'playerIds',
          message: `must name only participants; not in the match: ${strangers.join(', ')}`,
        });
      }
      break;
    }
    case 'ticket.state_changed':
      if (playerIds.length !== 1) {
        problems.push({
          field: 'playerIds',
          message: `a ticket event concerns its player alone, got ${playerIds.length} players`,
        });
      }
      break;
    case 'rating.updated':
      if (playerIds.length !== 1 || playerIds[0] !== payloadId) {
        problems.push({
          field: 'playerIds',
          message: `a rating event concerns its player alone (${String(payloadId)})`,
        });
      }
      break;
    case 'backfill.state_changed': {
      const addressed = new Set(playerIds);
      const added = (payload as EventPayloads[typeof event]).playerIds;
      if (!added.every((id) => addressed.has(id))) {
        problems.push({
          field: 'playerIds',
          message: 'must include every player the request added',
        });
      }
      break;
    }
  }
  return problems;
}

function subjectOf(
  event: unknown,
  aggregateType: unknown,
  aggregateId: unknown,
  revision: unknown,
): string {
  const text = (value: unknown) =>
    typeof value === 'string'
      ? value.slice(0, 64)
      : typeof value === 'number' || typeof value === 'bigint'
        ? String(value)
        : '?';
  return `${text(event)} ${text(aggregateType)} ${text(aggregateId)} r${text(revision)}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
