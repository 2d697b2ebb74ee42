import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import {
  DEAD_LETTER_DEFAULT_LIMIT,
  DEAD_LETTER_MAX_LIMIT,
  DEAD_LETTER_REASON_MAX_LENGTH,
  type DeadLetterFilter,
  type DeadLetterSelection,
} from '@matchplane/outbox';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';
import { IsInstantInput } from '../http/instant-input';
import { IsUuidInput } from '../http/uuid-input';

const NOT_BLANK = /\S/;

export class DeadLetterFilterDto {
  @ApiPropertyOptional({ description: 'Event type, exactly', example: 'match.state_changed' })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, 200)
  event?: string;

  @ApiPropertyOptional({ description: 'Aggregate (match or ticket) id', format: 'uuid' })
  @IsOptionalNonNull()
  @IsUuidInput()
  aggregateId?: string;

  @ApiPropertyOptional({ description: 'Dead-lettered at or after (ISO 8601)', format: 'date-time' })
  @IsOptionalNonNull()
  @IsInstantInput()
  from?: string;

  @ApiPropertyOptional({ description: 'Dead-lettered before (ISO 8601)', format: 'date-time' })
  @IsOptionalNonNull()
  @IsInstantInput()
  to?: string;

  toFilter(): DeadLetterFilter {
    return {
      event: this.event,
      aggregateId: this.aggregateId,
      from: this.from === undefined ? undefined : new Date(this.from),
      to: this.to === undefined ? undefined : new Date(this.to),
    };
  }
}

export class ListDeadLettersQuery extends DeadLetterFilterDto {
  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: DEAD_LETTER_MAX_LIMIT,
    default: DEAD_LETTER_DEFAULT_LIMIT,
  })
  @IsOptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(DEAD_LETTER_MAX_LIMIT)
  limit?: number;
}

export class ReplayDeadLetterBody {
  @ApiPropertyOptional({
    description: 'Why, for the audit trail',
    maxLength: DEAD_LETTER_REASON_MAX_LENGTH,
  })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(DEAD_LETTER_REASON_MAX_LENGTH)
  reason?: string;
}

export class BulkReplayBody extends DeadLetterFilterDto {
  @ApiPropertyOptional({
    description: 'Replay every dead letter; required when no filter is given, refused with one',
  })
  @IsOptionalNonNull()
  @IsBoolean()
  all?: boolean;

  @ApiProperty({
    description: 'Why, for the audit trail',
    maxLength: DEAD_LETTER_REASON_MAX_LENGTH,
  })
  @IsString()
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  @MaxLength(DEAD_LETTER_REASON_MAX_LENGTH)
  reason!: string;

  toSelection(): DeadLetterSelection {
    return { ...this.toFilter(), all: this.all };
  }
}

export class DiscardDeadLetterBody {
  @ApiProperty({
    description: 'Why, for the audit trail (required)',
    maxLength: DEAD_LETTER_REASON_MAX_LENGTH,
  })
  @IsString()
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  @MaxLength(DEAD_LETTER_REASON_MAX_LENGTH)
  reason!: string;
}
