import { Controller, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ErrorCode, type ReadyCheckAnswerResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { ReadyCheck, type ReadyCheckAnswer } from '@matchplane/matches';
import { noShowPenaltyPolicy, type AuthenticatedSession } from '@matchplane/players';
import { contractPaths } from '@matchplane/routing';
import { ApiConfig } from '../api.config';
import { CurrentSession, PlayerAuthGuard } from '../auth/player-auth.guard';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { UuidParamPipe } from '../http/uuid-input';

const matchId = new UuidParamPipe('match id');

/**
 * A player's answer to its match's ready check. Naturally idempotent (the answer is kept on the
 * roster row and a repeat finds it), so no Idempotency-Key is asked for.
 */
@ApiTags('matches')
@ApiBearerAuth()
@UseGuards(PlayerAuthGuard)
@RateLimit(RateLimitScope.PLAYER)
@Controller(contractPaths('matches'))
export class ReadyCheckController {
  constructor(
    private readonly readyCheck: ReadyCheck,
    @Inject(ApiConfig) private readonly config: ApiConfig,
  ) {}

  @Post(':id/accept')
  @HttpCode(200)
  @ApiResponse({
    status: 200,
    description: 'Accepted (ReadyCheckAnswerResponse); the last acceptance starts allocation',
  })
  @ApiResponse({ status: 404, description: 'NOT_FOUND: no such match of this player' })
  @ApiResponse({
    status: 409,
    description:
      'NOT_AWAITING_ACCEPTANCE (`matchState` says where the match is), or ACCEPTANCE_ALREADY_ANSWERED (declined already)',
  })
  accept(
    @Param('id', matchId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<ReadyCheckAnswerResponse> {
    return this.answer(session.playerId, id, 'ACCEPTED');
  }

  @Post(':id/decline')
  @HttpCode(200)
  @ApiResponse({
    status: 200,
    description:
      'Declined (ReadyCheckAnswerResponse): the match is CANCELLED, and this player gets the no-show cooldown',
  })
  @ApiResponse({ status: 404, description: 'NOT_FOUND: no such match of this player' })
  @ApiResponse({
    status: 409,
    description:
      'NOT_AWAITING_ACCEPTANCE (`matchState` says where the match is), or ACCEPTANCE_ALREADY_ANSWERED (accepted already)',
  })
  decline(
    @Param('id', matchId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<ReadyCheckAnswerResponse> {
    return this.answer(session.playerId, id, 'DECLINED');
  }

  private async answer(
    playerId: string,
    id: string,
    answer: ReadyCheckAnswer,
  ): Promise<ReadyCheckAnswerResponse> {
    const outcome = await this.readyCheck.answer(
      playerId,
      id,
      answer,
      noShowPenaltyPolicy(this.config),
    );
    switch (outcome.kind) {
      case 'recorded':
        return { matchId: id, answer, matchState: outcome.matchState };
      case 'not_found':
        // Another player's match is answered like one that does not exist.
        throw new CodedError(ErrorCode.NOT_FOUND, `No match ${id} of this player`);
      case 'closed':
        throw new CodedError(
          ErrorCode.NOT_AWAITING_ACCEPTANCE,
          `Match ${id} is ${outcome.matchState}: it is not waiting for its players to accept`,
          { extensions: { matchState: outcome.matchState } },
        );
      case 'answered_otherwise':
        throw new CodedError(
          ErrorCode.ACCEPTANCE_ALREADY_ANSWERED,
          `This player already ${outcome.answer.toLowerCase()} match ${id}: an answer is final`,
        );
    }
  }
}
