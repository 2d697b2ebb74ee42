import { ErrorCode } from '@matchplane/contracts';
import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { MatchHistoryResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { contractPaths } from '@matchplane/routing';
import { CurrentSession, PlayerAuthGuard } from '../auth/player-auth.guard';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { MATCH_HISTORY_DEFAULT_PAGE, MatchHistoryQueryDto } from './match-history.dto';
import { MatchHistoryService } from './match-history.service';
import { Answers } from '../http/openapi/api-answers.decorator';

/** The calling player's finished matches, newest first: mode, region, teams, result, rating change. */
@ApiTags('matches')
@ApiBearerAuth()
@UseGuards(PlayerAuthGuard)
@RateLimit(RateLimitScope.PLAYER)
@Controller(contractPaths('matches'))
export class MatchHistoryController {
  constructor(private readonly history: MatchHistoryService) {}

  @Get('history')
  @Answers({
    summary: "This player's finished matches, newest first",
    caller: 'player',
    status: 200,
    body: 'MatchHistoryResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.INVALID_CURSOR],
  })
  page(
    @Query() query: MatchHistoryQueryDto,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<MatchHistoryResponse> {
    return this.history.page(
      session.playerId,
      query.limit ?? MATCH_HISTORY_DEFAULT_PAGE,
      query.cursor,
    );
  }
}
