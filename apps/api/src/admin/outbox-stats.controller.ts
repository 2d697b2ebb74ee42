import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { OutboxStatsService, type OutboxStats } from '@matchplane/outbox';
import { OperatorGuard } from './operator.guard';

@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller(contractPaths('admin/outbox'))
export class OutboxStatsController {
  constructor(private readonly outboxStats: OutboxStatsService) {}

  @Get('stats')
  stats(): Promise<OutboxStats> {
    return this.outboxStats.stats();
  }
}
