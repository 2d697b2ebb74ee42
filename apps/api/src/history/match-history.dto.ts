import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import type { MatchHistoryQuery } from '@matchplane/contracts';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';

export const MATCH_HISTORY_MAX_PAGE = 50;
export const MATCH_HISTORY_DEFAULT_PAGE = 20;

export class MatchHistoryQueryDto implements MatchHistoryQuery {
  @ApiPropertyOptional({
    description: 'Matches per page',
    minimum: 1,
    maximum: MATCH_HISTORY_MAX_PAGE,
    default: MATCH_HISTORY_DEFAULT_PAGE,
  })
  @IsOptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MATCH_HISTORY_MAX_PAGE)
  limit?: number;

  @ApiPropertyOptional({ description: '`nextCursor` of the previous page' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
