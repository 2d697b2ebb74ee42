import { ErrorCode } from '@matchplane/contracts';
import { Get, Query } from '@nestjs/common';
import type { MatchHistoryResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { MATCH_HISTORY_DEFAULT_PAGE, MatchHistoryQueryDto } from './match-history.dto';
import { MatchHistoryService } from './match-history.service';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

/** The calling player's finished matches, newest first: mode, region, teams, result, rating change. */
@PlayerController('matches')
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
