import { Get } from '@nestjs/common';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';
import { Answers } from '../http/openapi/api-answers.decorator';
import { OperatorController } from './operator.decorator';

@OperatorController('outbox')
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
