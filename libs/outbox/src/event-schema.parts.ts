// class-transformer's @Type reads the emitted design types at decoration time.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { isIsoInstant, isLabel, isUuid } from '@matchplane/domain';

/** One thing wrong with an envelope, named by its field path (`payload.participants.0.team`). */
export interface EnvelopeProblem {
  readonly field: string;
  readonly message: string;
}

/** The property decorators and shared shapes every event schema is written with. */
export const IsCanonicalUuid = (): PropertyDecorator =>
  ValidateBy({
    name: 'isCanonicalUuid',
    validator: {
      validate: (value: unknown) => isUuid(value),
      defaultMessage: () => 'must be a canonical lowercase uuid (not the nil uuid)',
    },
  });

export const IsLabel = (): PropertyDecorator =>
  ValidateBy({
    name: 'isLabel',
    validator: {
      validate: (value: unknown) => isLabel(value),
      defaultMessage: () =>
        'must be a name of 1-64 printable characters without surrounding whitespace',
    },
  });

export const IsIsoInstant = (): PropertyDecorator =>
  ValidateBy({
    name: 'isIsoInstant',
    validator: {
      validate: (value: unknown) => isIsoInstant(value),
      defaultMessage: () => 'must be an ISO-8601 UTC instant as Date#toISOString() prints it',
    },
  });

/** `null` is a value here (the creation's `from`); a missing field is not. */
export const NullOrIn = (values: readonly string[]): PropertyDecorator => {
  const nullable = ValidateIf((_object: object, value: unknown) => value !== null);
  const member = IsIn(values, { message: `must be null or one of ${values.join(', ')}` });
  return (target, key) => {
    nullable(target, key);
    member(target, key);
  };
};

/** Optional means absent: an explicit null is validated, and rejected, like any other value. */
export const IfPresent = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);

export class ParticipantSchema {
  @IsCanonicalUuid()
  playerId!: string;

  @IsCanonicalUuid()
  ticketId!: string;

  @IsInt()
  @Min(0)
  team!: number;
}

/** What every match event carries: the match, where it runs, its mode and whole roster. */
export class MatchEventSchema {
  @IsCanonicalUuid()
  matchId!: string;

  @IsLabel()
  region!: string;

  @IfPresent()
  @IsLabel()
  serverRegion?: string;

  @IsLabel()
  mode!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => ParticipantSchema)
  participants!: ParticipantSchema[];
}

/** The transition rule every state change shares: `legal` says its state machine allows `from -> to`. */
export function transitionProblems(
  aggregate: string,
  from: string | null,
  to: string,
  legal: boolean,
): EnvelopeProblem[] {
  if (legal) return [];
  return [
    { field: 'payload.to', message: `${String(from)} -> ${to} is not a ${aggregate} transition` },
  ];
}

/** The reason rule every state change shares: a reason exactly when its transition takes one. */
export function reasonProblems(
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
