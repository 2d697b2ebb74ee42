import { Inject, Param, Post } from '@nestjs/common';
import { ErrorCode, type ReadyCheckAnswerResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { ReadyCheck, type ReadyCheckAnswer } from '@matchplane/matches';
import { noShowPenaltyPolicy, type AuthenticatedSession } from '@matchplane/players';
import { ApiConfig } from '../api.config';
import { CurrentSession } from '../auth/player-auth.guard';
import { UuidParamPipe } from '../http/uuid-input';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

const matchId = new UuidParamPipe('match id');

/** Accepting and declining answer alike: the answer kept, or why the check takes none. */
function AnswersReadyCheck(summary: string): MethodDecorator {
  return Answers({
    summary,
    caller: 'player',
    status: 200,
    body: 'ReadyCheckAnswerResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.NOT_FOUND,
      ErrorCode.NOT_AWAITING_ACCEPTANCE,
      ErrorCode.ACCEPTANCE_ALREADY_ANSWERED,
    ],
  });
}

/**
 * A player's answer to its match's ready check. Naturally idempotent (the answer is kept on the
 * roster row and a repeat finds it), so no Idempotency-Key is asked for.
 */
@PlayerController('matches')
export class ReadyCheckController {
  constructor(
    private readonly readyCheck: ReadyCheck,
    @Inject(ApiConfig) private readonly config: ApiConfig,
  ) {}

  @Post(':id/accept')
  @AnswersReadyCheck("Accept the match's ready check (the last acceptance starts allocation)")
  accept(
    @Param('id', matchId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<ReadyCheckAnswerResponse> {
    return this.answer(session.playerId, id, 'ACCEPTED');
  }

  @Post(':id/decline')
  @AnswersReadyCheck(
    'Decline the ready check: the match is cancelled and this player gets the no-show cooldown',
  )
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
