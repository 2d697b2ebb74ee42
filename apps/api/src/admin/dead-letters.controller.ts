import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
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
import { Operator } from './operator.decorator';
import { OperatorGuard } from './operator.guard';
import { OutboxIdPipe } from './outbox-id.pipe';

@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller(contractPaths('admin/dead-letters'))
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLetterService) {}

  @Get()
  list(@Query() query: ListDeadLettersQuery): Promise<DeadLetterPage> {
    return this.deadLetters.list(query.toFilter(), query.cursor, query.limit);
  }

  @Post('replay')
  @HttpCode(200)
  replayMatching(
    @Body() body: BulkReplayBody,
    @Operator() operator: string,
  ): Promise<BulkReplayResult> {
    return this.deadLetters.replayMatching(body.toSelection(), operator, body.reason);
  }

  @Get(':id')
  show(@Param('id', OutboxIdPipe) id: string): Promise<DeadLetterDetail> {
    return this.deadLetters.show(id);
  }

  @Post(':id/replay')
  @HttpCode(200)
  replay(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: ReplayDeadLetterBody,
    @Operator() operator: string,
  ): Promise<ReplayedDeadLetter> {
    return this.deadLetters.replay(id, operator, body.reason);
  }

  @Post(':id/discard')
  @HttpCode(200)
  discard(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: DiscardDeadLetterBody,
    @Operator() operator: string,
  ): Promise<DiscardedDeadLetter> {
    return this.deadLetters.discard(id, operator, body.reason);
  }
}
