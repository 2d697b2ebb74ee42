import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';
import { OperatorGuard } from './operator.guard';
import { Answers } from '../http/openapi/api-answers.decorator';

@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller(contractPaths('admin/outbox'))
export class OutboxStatsController {
  constructor(private readonly outboxStats: OutboxStatsService) {}

  @Get('stats')
  @Answers({
    summary: 'Outbox backlog: pending, dead letters, blocked aggregates',
    caller: 'operator',
    status: 200,
    body: 'OutboxStats',
  })
  stats(): Promise<OutboxStats> {
    return this.outboxStats.stats();
  }
}
