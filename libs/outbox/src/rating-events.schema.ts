import { IsIn, IsNumber, IsPositive } from 'class-validator';
import { RatingUpdateReason, type RatingUpdatedPayload } from '@matchplane/domain';
import { IfPresent, IsCanonicalUuid, type EnvelopeProblem } from './event-schema.parts';

/** Finite (no NaN, no Infinity): a rating is stored as double precision and must be comparable. */
const IsFiniteNumber = (): PropertyDecorator =>
  IsNumber(
    { allowNaN: false, allowInfinity: false },
    { message: '$property must be a finite number' },
  );

/** `rating.updated`: a player's rating moved, by a match result or an operator. */
export class RatingUpdatedSchema {
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

export function ratingRules(payload: RatingUpdatedPayload): EnvelopeProblem[] {
  const fromMatch = payload.reason === RatingUpdateReason.MATCH_RESULT;
  if (fromMatch && payload.matchId === undefined) {
    return [{ field: 'payload.matchId', message: 'a rating moved by a match result must name it' }];
  }
  if (!fromMatch && payload.matchId !== undefined) {
    return [{ field: 'payload.matchId', message: `${payload.reason} concerns no match` }];
  }
  return [];
}
