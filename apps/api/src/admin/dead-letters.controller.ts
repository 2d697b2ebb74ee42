import { ErrorCode } from '@matchplane/contracts';
import { Body, Get, Param, Post, Query } from '@nestjs/common';
import {
  DeadLetterService,
  type BulkReplayResult,
  type DeadLetterDetail,
  type DeadLetterPage,
  type DiscardedDeadLetter,
  type ReplayedDeadLetter,
} from '@matchplane/outbox';
import {
  BulkReplayBody,
  DiscardDeadLetterBody,
  ListDeadLettersQuery,
  ReplayDeadLetterBody,
} from './dead-letters.dto';
import { Operator, OperatorController } from './operator.decorator';
import { OutboxIdPipe } from './outbox-id.pipe';
import { Answers } from '../http/openapi/api-answers.decorator';

@OperatorController('dead-letters')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLetterService) {}

  @Get()
  @Answers({
    summary: 'List dead letters (filters, cursor)',
    caller: 'operator',
    status: 200,
    body: 'DeadLetterPage',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.INVALID_CURSOR],
  })
  list(@Query() query: ListDeadLettersQuery): Promise<DeadLetterPage> {
    return this.deadLetters.list(query.toFilter(), query.cursor, query.limit);
  }

  @Post('replay')
  @Answers({
    summary: 'Replay every dead letter matching a selection',
    caller: 'operator',
    status: 200,
    body: 'BulkReplayResult',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON],
  })
  replayMatching(
    @Body() body: BulkReplayBody,
    @Operator() operator: string,
  ): Promise<BulkReplayResult> {
    return this.deadLetters.replayMatching(body.toSelection(), operator, body.reason);
  }

  @Get(':id')
  @Answers({
    summary: 'One dead letter with its payload and delivery history',
    caller: 'operator',
    status: 200,
    body: 'DeadLetterDetail',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.DEAD_LETTER_NOT_FOUND],
  })
  show(@Param('id', OutboxIdPipe) id: string): Promise<DeadLetterDetail> {
    return this.deadLetters.show(id);
  }

  @Post(':id/replay')
  @Answers({
    summary: 'Put one dead letter back in the outbox',
    caller: 'operator',
    status: 200,
    body: 'ReplayedDeadLetter',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.DEAD_LETTER_NOT_FOUND,
      ErrorCode.NOT_DEAD_LETTERED,
    ],
  })
  replay(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: ReplayDeadLetterBody,
    @Operator() operator: string,
  ): Promise<ReplayedDeadLetter> {
    return this.deadLetters.replay(id, operator, body.reason);
  }

  @Post(':id/discard')
  @Answers({
    summary: 'Discard one dead letter',
    caller: 'operator',
    status: 200,
    body: 'DiscardedDeadLetter',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.DEAD_LETTER_NOT_FOUND,
      ErrorCode.NOT_DEAD_LETTERED,
    ],
  })
  discard(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: DiscardDeadLetterBody,
    @Operator() operator: string,
  ): Promise<DiscardedDeadLetter> {
    return this.deadLetters.discard(id, operator, body.reason);
  }
}
