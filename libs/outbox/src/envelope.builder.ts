import { isUuid, type DomainEvent } from '@matchplane/domain';
import { InvalidEnvelopeError } from './envelope.error';
import { crossProblems } from './envelope.consistency';
import {
  occurredAtProblems,
  parseRevision,
  playerIdProblems,
  type RevisionSource,
} from './envelope.fields';
import type { EnvelopeInput, OutboxEnvelope, StoredEnvelope } from './envelope.types';
import {
  AGGREGATE_TYPE_OF,
  EVENT_TYPES,
  isEventType,
  type EventPayloads,
  type EventType,
} from './events';
import { describeValue, payloadProblems, type EnvelopeProblem } from './events.schemas';

export * from './envelope.types';

const ENVELOPE_FIELDS = [
  'event',
  'aggregateType',
  'aggregateId',
  'revision',
  'occurredAt',
  'playerIds',
  'payload',
] as const;

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
