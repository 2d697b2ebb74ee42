import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsNumber,
  IsPositive,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';
import { IsUuidInput } from '../http/uuid-input';

/**
 * Entries per import: a full body (API_BODY_LIMIT_BYTES, 64 KiB by default) holds about 700, and
 * one import is one transaction holding every named player's row lock; larger sets go in batches.
 */
export const RATING_IMPORT_MAX_ENTRIES = 500;
export const RATING_IMPORT_REASON_MAX_LENGTH = 500;
/**
 * Bounds on imported values, far outside anything openskill produces (mu around 0-50, sigma at
 * most 25/3): a finite but huge mu would make an infinite display rating.
 */
export const RATING_IMPORT_MAX_ABS_MU = 1_000;
export const RATING_IMPORT_MAX_SIGMA = 1_000;

const FINITE = { allowNaN: false, allowInfinity: false };

export class RatingImportEntry {
  @ApiProperty({ format: 'uuid' })
  @IsUuidInput()
  playerId!: string;

  @ApiProperty({
    description: 'openskill mu (a new player: 25)',
    example: 27.5,
    minimum: -RATING_IMPORT_MAX_ABS_MU,
    maximum: RATING_IMPORT_MAX_ABS_MU,
  })
  @IsNumber(FINITE)
  @Min(-RATING_IMPORT_MAX_ABS_MU)
  @Max(RATING_IMPORT_MAX_ABS_MU)
  mu!: number;

  @ApiProperty({
    description: 'openskill sigma, > 0 (a new player: 25/3)',
    example: 4.2,
    minimum: 0,
    exclusiveMinimum: true,
    maximum: RATING_IMPORT_MAX_SIGMA,
  })
  @IsNumber(FINITE)
  @IsPositive()
  @Max(RATING_IMPORT_MAX_SIGMA)
  sigma!: number;
}

export class ImportRatingsBody {
  @ApiProperty({ type: [RatingImportEntry], maxItems: RATING_IMPORT_MAX_ENTRIES })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(RATING_IMPORT_MAX_ENTRIES)
  @ValidateNested({ each: true })
  @Type(() => RatingImportEntry)
  ratings!: RatingImportEntry[];

  @ApiPropertyOptional({
    description: 'Why, for the audit trail',
    maxLength: RATING_IMPORT_REASON_MAX_LENGTH,
  })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(RATING_IMPORT_REASON_MAX_LENGTH)
  reason?: string;
}

export class PlayerIdParams {
  @ApiProperty({ format: 'uuid' })
  @IsUuidInput()
  playerId!: string;
}

/** A player's rating as the operator routes show it. */
export interface PlayerRatingResponse {
  playerId: string;
  /** openskill mean. */
  mu: number;
  /** openskill uncertainty (one standard deviation). */
  sigma: number;
  /** The display rating the matcher's rating window reads: 1500 + 48 x (mu - 3 sigma). */
  rating: number;
  /** How many times the rating changed (the revision of its last rating.updated event). */
  revision: number;
  /** ISO-8601; null: never changed. */
  updatedAt: string | null;
}

export interface ImportRatingsResponse {
  imported: number;
  ratings: PlayerRatingResponse[];
}
