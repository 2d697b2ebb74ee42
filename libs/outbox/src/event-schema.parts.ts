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
