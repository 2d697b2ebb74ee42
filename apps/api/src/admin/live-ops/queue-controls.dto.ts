import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsOptionalNonNull } from '../../http/is-optional-non-null.decorator';

export const QUEUE_CONTROL_REASON_MAX_LENGTH = 500;
/** A week: a longer expected hold is no hint a client can use. */
export const QUEUE_CONTROL_MAX_RETRY_AFTER_SECONDS = 604_800;

export class QueueControlTarget {
  @ApiProperty({ enum: ['mode', 'region'] })
  @IsIn(['mode', 'region'])
  scope!: 'mode' | 'region';

  @ApiProperty({ description: 'A configured mode or region', example: 'duel' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: 'name must be a mode or region name' })
  name!: string;
}

/** Every operator action on live play says why (kept in the audit trail). */
export class OperatorReasonBody {
  @ApiProperty({
    description: 'Why (kept in the audit trail; a queue hold shows it to refused players)',
  })
  @IsString()
  @Matches(/\S/, { message: 'reason must not be blank' })
  @MaxLength(QUEUE_CONTROL_REASON_MAX_LENGTH)
  reason!: string;
}

export class QueueControlBody extends OperatorReasonBody {
  @ApiPropertyOptional({
    description: 'How long the hold is expected to last (s): the Retry-After of refused enqueues',
    minimum: 1,
    maximum: QUEUE_CONTROL_MAX_RETRY_AFTER_SECONDS,
  })
  @IsOptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(QUEUE_CONTROL_MAX_RETRY_AFTER_SECONDS)
  retryAfterSeconds?: number;
}
