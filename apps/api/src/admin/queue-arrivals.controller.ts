import { Get, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { QUEUE_ARRIVALS_MAX_LIMIT } from '@matchplane/tickets';
import { Answers } from '../http/openapi/api-answers.decorator';
import { IsInstantInput } from '../http/instant-input';
import { IsOptionalNonNull } from '../http/is-optional-non-null.decorator';
import { OperatorController } from './operator.decorator';
import { QueueCaptureAdmin, type CapturedArrivalPage } from './queue-capture.admin';

/** A week: a longer capture is several exports (each ordered, each resumable by its cursor). */
const MAX_WINDOW_MS = 7 * 24 * 3_600_000;

export class QueueArrivalsQuery {
  @ApiProperty({ description: 'Tickets enqueued at or after (ISO 8601)', format: 'date-time' })
  @IsInstantInput()
  from!: string;

  @ApiPropertyOptional({
    description: 'Tickets enqueued before (ISO 8601; default now)',
    format: 'date-time',
  })
  @IsOptionalNonNull()
  @IsInstantInput()
  until?: string;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(200)
  cursor?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: QUEUE_ARRIVALS_MAX_LIMIT, default: 1_000 })
  @IsOptionalNonNull()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(QUEUE_ARRIVALS_MAX_LIMIT)
  limit?: number;
}

/** The queue's recent arrivals, the simulator's capture (docs/SIMULATOR.md). */
@OperatorController('queue')
export class QueueArrivalsController {
  constructor(private readonly capture: QueueCaptureAdmin) {}

  @Get('arrivals')
  @Answers({
    summary: 'Recent queue arrivals, oldest first: a capture for `npm run simulate`',
    caller: 'operator',
    status: 200,
    body: 'QueueArrivalPage',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.INVALID_CURSOR],
  })
  list(@Query() query: QueueArrivalsQuery): Promise<CapturedArrivalPage> {
    const from = new Date(query.from);
    const until = query.until === undefined ? new Date() : new Date(query.until);
    if (until.getTime() <= from.getTime() || until.getTime() - from.getTime() > MAX_WINDOW_MS) {
      throw new CodedError(
        ErrorCode.VALIDATION_FAILED,
        'until must be after from, and at most 7 days after it',
      );
    }
    return this.capture.page({ from, until }, query.limit ?? 1_000, query.cursor);
  }
}
