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

/** Each event type's payload: its shape (the schema) and the rules that tie its fields together. */
type PayloadContracts = {
  [E in EventType]: {
    readonly schema: Schema;
    readonly rules: (payload: EventPayloads[E]) => EnvelopeProblem[];
  };
};

const PAYLOAD_CONTRACTS: PayloadContracts = {
  'match.state_changed': { schema: MatchStateChangedSchema, rules: matchRules },
  'match.participants_added': {
    schema: MatchParticipantsAddedSchema,
    rules: participantsAddedRules,
  },
  'match.presence_changed': { schema: MatchPresenceChangedSchema, rules: presenceRules },
  'backfill.state_changed': { schema: BackfillStateChangedSchema, rules: backfillRules },
  'ticket.state_changed': { schema: TicketStateChangedSchema, rules: ticketRules },
  'rating.updated': { schema: RatingUpdatedSchema, rules: ratingRules },
};

const COMPILED_SCHEMAS = Object.fromEntries(
  Object.entries(PAYLOAD_CONTRACTS).map(([event, { schema }]) => [
    event,
    new CompiledSchema(schema),
  ]),
) as { [E in EventType]: CompiledSchema };

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
  const instance = plainToInstance(PAYLOAD_CONTRACTS[event].schema, payload);
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
  const { rules }: PayloadContracts[E] = PAYLOAD_CONTRACTS[event];
  return rules(payload);
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
