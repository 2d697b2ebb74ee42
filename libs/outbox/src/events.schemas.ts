// class-transformer's @Type reads the emitted design types at decoration time.
import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import {
  ArrayMinSize,
  getMetadataStorage,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsPositive,
  Min,
  ValidateBy,
  ValidateNested,
  ValidationTypes,
  validateSync,
  type ValidationArguments,
  type ValidationError,
  type MetadataStorage,
} from 'class-validator';
import {
  BACKFILL_STATES,
  BackfillReason,
  backfillReasonsFor,
  canTransitionBackfill,
  canTransitionMatch,
  canTransitionTicket,
  isUuid,
  MatchCancelReason,
  MatchFailureReason,
  matchReasonsFor,
  MATCH_INITIAL_STATES,
  MATCH_STATES,
  participantProblems,
  RatingUpdateReason,
  TicketReason,
  ticketEventHasMatch,
  ticketReasonsFor,
  TICKET_STATES,
  type BackfillState,
  type MatchEndReason,
  type MatchState,
  type TicketState,
} from '@matchplane/domain';
import type { EventPayloads, EventType } from './events';
import {
  IfPresent,
  IsCanonicalUuid,
  IsIsoInstant,
  IsLabel,
  MatchEventSchema,
  NullOrIn,
  ParticipantSchema,
  type EnvelopeProblem,
} from './event-schema.parts';
import { MatchPresenceChangedSchema, presenceRules } from './match-presence.schema';

export type { EnvelopeProblem } from './event-schema.parts';

const MATCH_END_REASONS: readonly MatchEndReason[] = [
  ...Object.values(MatchFailureReason),
  ...Object.values(MatchCancelReason),
];

class MatchStateChangedSchema extends MatchEventSchema {
  @NullOrIn(MATCH_STATES)
  from!: MatchState | null;

  @IsIn(MATCH_STATES)
  to!: MatchState;

  @IfPresent()
  @IsIn(MATCH_END_REASONS)
  reason?: MatchEndReason;
}

class TicketStateChangedSchema {
  @IsCanonicalUuid()
  ticketId!: string;

  @NullOrIn(TICKET_STATES)
  from!: TicketState | null;

  @IsIn(TICKET_STATES)
  to!: TicketState;

  @IsLabel()
  mode!: string;

  @IsIsoInstant()
  enqueuedAt!: string;

  @IfPresent()
  @IsCanonicalUuid()
  matchId?: string;

  @IfPresent()
  @IsIn(Object.values(TicketReason))
  reason?: TicketReason;
}

/** Finite (no NaN, no Infinity): a rating is stored as double precision and must be comparable. */
const IsFiniteNumber = (): PropertyDecorator =>
  IsNumber(
    { allowNaN: false, allowInfinity: false },
    { message: '$property must be a finite number' },
  );

class RatingUpdatedSchema {
  @IsCanonicalUuid()
  playerId!: string;

  @IsIn(Object.values(RatingUpdateReason))
  reason!: RatingUpdateReason;

  @IfPresent()
  @IsCanonicalUuid()
  matchId?: string;

  @IsFiniteNumber()
  mu!: number;

  @IsFiniteNumber()
  @IsPositive()
  sigma!: number;

  @IsFiniteNumber()
  rating!: number;

  @IsFiniteNumber()
  previousMu!: number;

  @IsFiniteNumber()
  @IsPositive()
  previousSigma!: number;

  @IsFiniteNumber()
  previousRating!: number;
}

class MatchParticipantsAddedSchema extends MatchEventSchema {
  @IsIn(MATCH_STATES)
  state!: MatchState;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => ParticipantSchema)
  added!: ParticipantSchema[];

  @IsCanonicalUuid()
  backfillRequestId!: string;
}

class BackfillStateChangedSchema {
  @IsCanonicalUuid()
  requestId!: string;

  @IsCanonicalUuid()
  matchId!: string;

  @IsLabel()
  mode!: string;

  @IsInt()
  @Min(0)
  team!: number;

  @IsInt()
  @Min(1)
  slots!: number;

  @NullOrIn(BACKFILL_STATES)
  from!: BackfillState | null;

  @IsIn(BACKFILL_STATES)
  to!: BackfillState;

  @IfPresent()
  @IsIn(Object.values(BackfillReason))
  reason?: BackfillReason;

  @IsArray()
  @ValidateBy(
    {
      name: 'isCanonicalUuid',
      validator: { validate: (value: unknown) => isUuid(value) },
    },
    { each: true, message: 'each must be a canonical lowercase uuid' },
  )
  playerIds!: string[];

  @IfPresent()
  @IsInt()
  @Min(2)
  rosterRevision?: number;

  @IsIsoInstant()
  expiresAt!: string;
}

type Schema = new () => object;
type Schemas = { [E in EventType]: Schema };

const PAYLOAD_SCHEMAS: Schemas = {
  'match.state_changed': MatchStateChangedSchema,
  'match.participants_added': MatchParticipantsAddedSchema,
  'match.presence_changed': MatchPresenceChangedSchema,
  'backfill.state_changed': BackfillStateChangedSchema,
  'ticket.state_changed': TicketStateChangedSchema,
  'rating.updated': RatingUpdatedSchema,
};

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/** One validator of a property, resolved from class-validator's metadata once. */
interface CompiledCheck {
  readonly validate: (value: unknown, args: ValidationArguments) => unknown;
  readonly constraints: unknown[];
  readonly each: boolean;
  readonly validateIf?: (object: unknown, value: unknown) => boolean;
}

interface CompiledProperty {
  readonly name: string;
  /** ValidateIf: all must hold for the property to be validated at all. */
  readonly conditions: ((object: unknown, value: unknown) => boolean)[];
  readonly checks: CompiledCheck[];
  /** ValidateNested over an array: the class class-transformer makes of each element. */
  readonly nested?: CompiledSchema;
}

/**
 * A payload schema compiled once from its class-validator metadata (the decorators above stay
 * the only statement of the rules). `accepts` runs the same validators in the order and under the
 * conditions class-validator's executor does, on the plain payload, so a valid payload costs no
 * plainToInstance and no metadata lookup. It is one-sided: it answers true only when
 * class-validator would accept, and anything it does not model exactly (a nested value that is
 * not an array of plain objects, a Set, a validator answering other than `true`) is a false, after
 * which class-validator itself decides and words the problems. Compiling refuses any metadata it
 * cannot model (promises, groups), so a new decorator cannot be skipped silently.
 */
class CompiledSchema {
  private readonly allowed: ReadonlySet<string>;
  private readonly properties: readonly CompiledProperty[];

  constructor(private readonly schema: Schema) {
    const storage = getMetadataStorage();
    const metadatas = storage.getTargetValidationMetadatas(schema, '', false, false, undefined);
    if (metadatas.length === 0) throw new Error(`${schema.name} has no validation metadata`);
    const byProperty = storage.groupByPropertyName(metadatas);
    this.allowed = new Set(Object.keys(byProperty));
    this.properties = Object.entries(byProperty).map(([name, list]) =>
      CompiledSchema.property(schema, name, list),
    );
  }

  private static property(
    schema: Schema,
    name: string,
    list: ValidationMetadata[],
  ): CompiledProperty {
    const conditions: CompiledProperty['conditions'] = [];
    const checks: CompiledCheck[] = [];
    let nested: CompiledSchema | undefined;
    for (const metadata of list) {
      if (metadata.groups?.length || metadata.always === false) {
        throw new Error(`${schema.name}.${name}: validation groups are not compiled`);
      }
      switch (metadata.type) {
        case ValidationTypes.CONDITIONAL_VALIDATION:
          conditions.push(metadata.constraints[0] as CompiledProperty['conditions'][number]);
          break;
        case ValidationTypes.IS_DEFINED:
        case ValidationTypes.CUSTOM_VALIDATION:
          for (const constraint of getMetadataStorage().getTargetValidatorConstraints(
            metadata.constraintCls,
          )) {
            if (constraint.async)
              throw new Error(`${schema.name}.${name}: async validators are not compiled`);
            const instance = constraint.instance as { validate: CompiledCheck['validate'] };
            checks.push({
              validate: (value, args) => instance.validate(value, args),
              constraints: metadata.constraints,
              each: metadata.each,
              ...(metadata.validateIf ? { validateIf: metadata.validateIf } : {}),
            });
          }
          break;
        case ValidationTypes.NESTED_VALIDATION:
          nested = CompiledSchema.elementSchema(schema, name);
          break;
        case ValidationTypes.WHITELIST:
          break;
        default:
          throw new Error(`${schema.name}.${name}: ${metadata.type} is not compiled`);
      }
    }
    return { name, conditions, checks, ...(nested ? { nested } : {}) };
  }

  /** What class-transformer makes of an element of the property's array, asked of it once. */
  private static elementSchema(schema: Schema, name: string): CompiledSchema {
    const probe = plainToInstance(schema, { [name]: [{}] }) as Record<string, unknown[]>;
    const element = probe[name]?.[0] as object | undefined;
    const elementClass = element?.constructor as Schema | undefined;
    if (!elementClass || elementClass === Object) {
      throw new Error(`${schema.name}.${name}: nested validation without a @Type class`);
    }
    return new CompiledSchema(elementClass);
  }

  accepts(object: Record<string, unknown>): boolean {
    if (Object.getPrototypeOf(object) !== Object.prototype) return false;
    for (const key of Object.keys(object)) if (!this.allowed.has(key)) return false;
    for (const property of this.properties) {
      const value = object[property.name];
      if (!property.conditions.every((condition) => condition(object, value))) continue;
      for (const check of property.checks) {
        if (check.validateIf && !check.validateIf(object, value)) continue;
        const args: ValidationArguments = {
          targetName: this.schema.name,
          property: property.name,
          object,
          value,
          constraints: check.constraints,
        };
        if (value instanceof Set || value instanceof Map) return false;
        const valid =
          check.each && Array.isArray(value)
            ? value.every((element) => check.validate(element, args) === true)
            : check.validate(value, args) === true;
        if (!valid) return false;
      }
      if (property.nested && value !== undefined) {
        if (!Array.isArray(value)) return false;
        for (const element of value as unknown[]) {
          if (!isPlainObject(element) || !property.nested.accepts(element)) return false;
        }
      }
    }
    return true;
  }
}

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

function matchRules(payload: EventPayloads['match.state_changed']): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const { from, to, reason } = payload;
  if (from === null ? !MATCH_INITIAL_STATES.includes(to) : !canTransitionMatch(from, to)) {
    problems.push({
      field: 'payload.to',
      message: `${String(from)} -> ${to} is not a match transition`,
    });
  }
  problems.push(...reasonProblems(matchReasonsFor(to), reason, `${to}`));
  for (const message of participantProblems(payload.participants)) {
    problems.push({ field: 'payload.participants', message });
  }
  return problems;
}

function participantsAddedRules(
  payload: EventPayloads['match.participants_added'],
): EnvelopeProblem[] {
  const problems = participantProblems(payload.participants).map((message) => ({
    field: 'payload.participants',
    message,
  }));
  const roster = new Set(payload.participants.map((p) => `${p.playerId}/${p.ticketId}/${p.team}`));
  if (!payload.added.every((p) => roster.has(`${p.playerId}/${p.ticketId}/${p.team}`))) {
    problems.push({ field: 'payload.added', message: 'every added player must be on the roster' });
  }
  return problems;
}

function backfillRules(payload: EventPayloads['backfill.state_changed']): EnvelopeProblem[] {
  const { from, to, reason } = payload;
  const problems: EnvelopeProblem[] = [];
  if (from === null ? to !== 'OPEN' : !canTransitionBackfill(from, to)) {
    problems.push({
      field: 'payload.to',
      message: `${String(from)} -> ${to} is not a backfill transition`,
    });
  }
  problems.push(...reasonProblems(backfillReasonsFor(to), reason, `${to}`));
  const filled = to !== 'OPEN' && to !== 'EXPIRED' && (from !== 'OPEN' || to !== 'CANCELLED');
  if (filled && payload.playerIds.length !== payload.slots) {
    problems.push({
      field: 'payload.playerIds',
      message: `a filled request names its ${payload.slots} players`,
    });
  }
  return problems;
}

function ticketRules(payload: EventPayloads['ticket.state_changed']): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const { from, to, reason, matchId } = payload;
  if (from === null ? to !== 'SEARCHING' : !canTransitionTicket(from, to)) {
    problems.push({
      field: 'payload.to',
      message: `${String(from)} -> ${to} is not a ticket transition`,
    });
  }
  const needsMatch = ticketEventHasMatch(from, to);
  if (needsMatch && matchId === undefined) {
    problems.push({
      field: 'payload.matchId',
      message: `${String(from)} -> ${to} must name its match`,
    });
  } else if (!needsMatch && matchId !== undefined) {
    problems.push({
      field: 'payload.matchId',
      message: `${String(from)} -> ${to} concerns no match`,
    });
  }
  problems.push(...reasonProblems(ticketReasonsFor(from, to), reason, `${String(from)} -> ${to}`));
  return problems;
}

function ratingRules(payload: EventPayloads['rating.updated']): EnvelopeProblem[] {
  const fromMatch = payload.reason === RatingUpdateReason.MATCH_RESULT;
  if (fromMatch && payload.matchId === undefined) {
    return [{ field: 'payload.matchId', message: 'a rating moved by a match result must name it' }];
  }
  if (!fromMatch && payload.matchId !== undefined) {
    return [{ field: 'payload.matchId', message: `${payload.reason} concerns no match` }];
  }
  return [];
}

function reasonProblems(
  allowed: readonly string[],
  reason: string | undefined,
  what: string,
): EnvelopeProblem[] {
  if (allowed.length === 0) {
    return reason === undefined
      ? []
      : [{ field: 'payload.reason', message: `${what} carries no reason` }];
  }
  if (reason === undefined || !allowed.includes(reason)) {
    return [
      { field: 'payload.reason', message: `${what} needs a reason out of ${allowed.join(', ')}` },
    ];
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

/** A JSON object: not null, not an array, not a class instance (a Date, a Map) that JSON would mangle. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date';
  if (typeof value === 'string') {
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return `${typeof value} ${String(value)}`;
  }
  return `a ${typeof value}`;
}
