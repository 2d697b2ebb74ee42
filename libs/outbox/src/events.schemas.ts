import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { EventPayloads, EventType } from './events';
import { BackfillStateChangedSchema, backfillRules } from './backfill-events.schema';
import { CompiledSchema, type Schema } from './compiled-schema';
import { describeValue, isPlainObject, type EnvelopeProblem } from './event-schema.parts';
import {
  MatchParticipantsAddedSchema,
  MatchStateChangedSchema,
  matchRules,
  participantsAddedRules,
} from './match-events.schema';
import { MatchPresenceChangedSchema, presenceRules } from './match-presence.schema';
import { RatingUpdatedSchema, ratingRules } from './rating-events.schema';
import { TicketStateChangedSchema, ticketRules } from './ticket-events.schema';

/*
 * The payload schema of every event type, one file per aggregate (match, ticket, rating,
 * backfill), and the one check the envelope builder runs: shape first, then the rules.
 */

export { describeValue, isPlainObject, type EnvelopeProblem } from './event-schema.parts';

type Schemas = { [E in EventType]: Schema };

const PAYLOAD_SCHEMAS: Schemas = {
  'match.state_changed': MatchStateChangedSchema,
  'match.participants_added': MatchParticipantsAddedSchema,
  'match.presence_changed': MatchPresenceChangedSchema,
  'backfill.state_changed': BackfillStateChangedSchema,
  'ticket.state_changed': TicketStateChangedSchema,
  'rating.updated': RatingUpdatedSchema,
};

const COMPILED_SCHEMAS: { [E in EventType]: CompiledSchema } = {
  'match.state_changed': new CompiledSchema(MatchStateChangedSchema),
  'match.participants_added': new CompiledSchema(MatchParticipantsAddedSchema),
  'match.presence_changed': new CompiledSchema(MatchPresenceChangedSchema),
  'backfill.state_changed': new CompiledSchema(BackfillStateChangedSchema),
  'ticket.state_changed': new CompiledSchema(TicketStateChangedSchema),
  'rating.updated': new CompiledSchema(RatingUpdatedSchema),
};

/**
 * Everything wrong with `payload` as the payload of `event`, first its shape (class-validator,
 * unknown fields rejected), then, once the shape holds, the rules that tie its fields together.
 * Empty when it is valid.
 */
export function payloadProblems(event: EventType, payload: unknown): EnvelopeProblem[] {
  if (!isPlainObject(payload)) {
    return [{ field: 'payload', message: `must be a JSON object, got ${describeValue(payload)}` }];
  }
  // The writers' hot path: a valid payload skips class-validator (see CompiledSchema).
  if (!COMPILED_SCHEMAS[event].accepts(payload)) {
    const problems = shapeProblems(event, payload);
    if (problems.length > 0) return problems;
  }
  return semanticProblems(event, payload as unknown as EventPayloads[EventType]);
}

/** class-validator's verdict on the payload's shape, with its messages: the authority. */
export function shapeProblems(
  event: EventType,
  payload: Record<string, unknown>,
): EnvelopeProblem[] {
  const instance = plainToInstance(PAYLOAD_SCHEMAS[event], payload);
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  return flatten(errors, 'payload');
}

/** Whether the compiled schema accepts the payload's shape (exported for its equivalence test). */
export function compiledShapeAccepts(event: EventType, payload: Record<string, unknown>): boolean {
  return COMPILED_SCHEMAS[event].accepts(payload);
}

function semanticProblems<E extends EventType>(
  event: E,
  payload: EventPayloads[E],
): EnvelopeProblem[] {
  switch (event) {
    case 'match.state_changed':
      return matchRules(payload as EventPayloads['match.state_changed']);
    case 'ticket.state_changed':
      return ticketRules(payload as EventPayloads['ticket.state_changed']);
    case 'rating.updated':
      return ratingRules(payload as EventPayloads['rating.updated']);
    case 'match.participants_added':
      return participantsAddedRules(payload as EventPayloads['match.participants_added']);
    case 'match.presence_changed':
      return presenceRules(payload as EventPayloads['match.presence_changed']);
    case 'backfill.state_changed':
      return backfillRules(payload as EventPayloads['backfill.state_changed']);
  }
  return [];
}

function flatten(errors: readonly ValidationError[], parent: string): EnvelopeProblem[] {
  return errors.flatMap((error) => {
    const field = `${parent}.${error.property}`;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]) => ({
      field,
      message:
        constraint === 'whitelistValidation'
          ? 'is not a field of this payload'
          : // class-validator starts its messages with the property name, which `field` already says.
            message.startsWith(`${error.property} `)
            ? message.slice(error.property.length + 1)
            : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}
