import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { MatchStateChanged, TicketStateChanged } from '@matchplane/domain';
import {
  AGGREGATE_TYPE_OF,
  EVENT_TYPES,
  PAYLOAD_CLASS,
  payloadAggregateId,
  type EventPayloads,
  type EventType,
} from './events';
import type { OutboxRow } from './outbox.row';

const INT64_MAX = 2n ** 63n - 1n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type EnvelopeOf<E extends EventType> = {
  readonly event: E;
  readonly aggregateType: (typeof AGGREGATE_TYPE_OF)[E];
  readonly aggregateId: string;
  /** int64 >= 1; a number when it is a safe integer, else a bigint. */
  readonly revision: number | bigint;
  readonly occurredAt: Date;
  /** Every participant the event concerns, no-shows included; unique. */
  readonly playerIds: readonly string[];
  readonly payload: EventPayloads[E];
};

/** A validated outbox envelope, discriminated by `event`. */
export type OutboxEnvelope = { [E in EventType]: EnvelopeOf<E> }[EventType];

export interface EnvelopeInput {
  event: unknown;
  aggregateType: unknown;
  aggregateId: unknown;
  revision: unknown;
  occurredAt: unknown;
  playerIds: unknown;
  payload: unknown;
}

export class InvalidEnvelopeError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid outbox envelope: ${problems.join('; ')}`);
    this.name = 'InvalidEnvelopeError';
  }
}

function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * A revision as the writer supplies it: an integer (number or bigint) in [1, int64 max]. Strings,
 * floats and the -1 sentinel of a CTE that matched nothing are errors, never coerced.
 */
function checkRevision(value: unknown, problems: string[]): number | bigint | undefined {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) problems.push(`revision must be an integer, got ${value}`);
    else if (value < 1) problems.push(`revision must be >= 1, got ${value}`);
    else return value;
    return undefined;
  }
  if (typeof value === 'bigint') {
    if (value < 1n) problems.push(`revision must be >= 1, got ${value}`);
    else if (value > INT64_MAX) problems.push(`revision ${value} overflows int64`);
    else return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
    return undefined;
  }
  problems.push(`revision must be an integer, got ${value === undefined ? 'nothing' : typeof value}`);
  return undefined;
}

function describe(errors: ValidationError[], parent: string): string[] {
  return errors.flatMap((error) => {
    const path = `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) => `${path}: ${message}`);
    return [...own, ...describe(error.children ?? [], path)];
  });
}

/**
 * The only way to make an outbox row. Every field is checked and the payload validated against
 * its event type (unknown fields rejected); any problem throws inside the writer's transaction,
 * so the state change rolls back with it and no undeliverable row is ever committed.
 */
export function buildEnvelope(input: EnvelopeInput): OutboxEnvelope {
  const problems: string[] = [];
  const event = input.event;
  if (!isEventType(event)) problems.push(`event must be one of ${EVENT_TYPES.join(', ')}, got ${JSON.stringify(event)}`);
  if (isEventType(event) && input.aggregateType !== AGGREGATE_TYPE_OF[event]) {
    problems.push(`aggregateType of ${event} must be "${AGGREGATE_TYPE_OF[event]}", got ${JSON.stringify(input.aggregateType)}`);
  }
  if (typeof input.aggregateId !== 'string' || !UUID.test(input.aggregateId)) {
    problems.push(`aggregateId must be a UUID, got ${JSON.stringify(input.aggregateId)}`);
  }
  const revision = checkRevision(input.revision, problems);
  if (!(input.occurredAt instanceof Date) || Number.isNaN(input.occurredAt.getTime())) {
    problems.push('occurredAt must be a valid Date');
  }
  const playerIds = input.playerIds;
  if (!Array.isArray(playerIds) || playerIds.length === 0) {
    problems.push('playerIds must be a non-empty array of UUIDs (every participant the event concerns)');
  } else {
    const bad = playerIds.filter((id) => typeof id !== 'string' || !UUID.test(id));
    if (bad.length > 0) problems.push(`playerIds must be UUIDs, got ${JSON.stringify(bad)}`);
    if (new Set(playerIds).size !== playerIds.length) problems.push('playerIds must not repeat a player');
  }
  let payload: EventPayloads[EventType] | undefined;
  if (typeof input.payload !== 'object' || input.payload === null || Array.isArray(input.payload)) {
    problems.push('payload must be an object');
  } else if (isEventType(event)) {
    const payloadClass: new () => object = PAYLOAD_CLASS[event];
    payload = plainToInstance(payloadClass, input.payload) as EventPayloads[EventType];
    const errors = validateSync(payload, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
    problems.push(...describe(errors, 'payload'));
    if (errors.length === 0) {
      if (typeof input.aggregateId === 'string' && payloadAggregateId(event, payload) !== input.aggregateId) {
        problems.push('payload names another aggregate than aggregateId');
      }
      if (event === 'match.state_changed' && Array.isArray(playerIds)) {
        const addressed = new Set<unknown>(playerIds);
        const missing = (payload as EventPayloads['match.state_changed']).participants.filter((p) => !addressed.has(p.playerId));
        if (missing.length > 0) problems.push(`playerIds must include every participant; missing ${missing.map((p) => p.playerId).join(', ')}`);
      }
    }
  }
  if (problems.length > 0) throw new InvalidEnvelopeError(problems);
  return Object.freeze({
    event,
    aggregateType: input.aggregateType,
    aggregateId: input.aggregateId,
    revision,
    occurredAt: input.occurredAt,
    playerIds: Object.freeze([...(playerIds as string[])]),
    payload: JSON.parse(JSON.stringify(payload)) as EventPayloads[EventType],
  }) as OutboxEnvelope;
}

/**
 * Delivery side: re-validates a row read back from PostgreSQL (a row written by an older version
 * may be malformed; that is a delivery failure, not a crash). pg returns int8 as a decimal string,
 * which is accepted here and only here.
 */
export function validateEnvelope(row: OutboxRow): OutboxEnvelope {
  const revision = typeof row.revision === 'string' && /^-?\d+$/.test(row.revision) ? BigInt(row.revision) : row.revision;
  return buildEnvelope({
    event: row.event,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    revision,
    occurredAt: row.occurred_at,
    playerIds: row.player_ids,
    payload: row.payload,
  });
}

/** The envelope of a domain event, as returned by the libs/domain transitions. */
export function envelopeFor(event: MatchStateChanged | TicketStateChanged): OutboxEnvelope {
  switch (event.type) {
    case 'match.state_changed':
      return buildEnvelope({
        event: event.type,
        aggregateType: 'match',
        aggregateId: event.matchId,
        revision: event.revision,
        occurredAt: event.occurredAt,
        playerIds: event.participants.map((p) => p.playerId),
        payload: {
          matchId: event.matchId,
          from: event.from,
          to: event.to,
          mode: event.mode,
          region: event.region,
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
          participants: event.participants.map(({ playerId, ticketId, team }) => ({ playerId, ticketId, team })),
        },
      });
    case 'ticket.state_changed':
      return buildEnvelope({
        event: event.type,
        aggregateType: 'ticket',
        aggregateId: event.ticketId,
        revision: event.revision,
        occurredAt: event.occurredAt,
        playerIds: [event.playerId],
        payload: {
          ticketId: event.ticketId,
          from: event.from,
          to: event.to,
          mode: event.mode,
          ...(event.matchId !== undefined ? { matchId: event.matchId } : {}),
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
        },
      });
  }
}
