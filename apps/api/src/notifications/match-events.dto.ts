import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';

export class MatchEventsQuery {
  @ApiPropertyOptional({
    description: 'The last revision the client has seen; events after it are returned (0: all)',
    example: 3,
    default: 0,
  })
  @IsOptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  after?: number;
}
