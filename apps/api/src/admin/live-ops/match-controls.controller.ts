import { ErrorCode } from '@matchplane/contracts';
import { Body, Param, Post } from '@nestjs/common';
import { UuidParamPipe } from '../../http/uuid-input';
import { Operator, OperatorController } from '../operator.decorator';
import {
  MatchControlsAdmin,
  type CancelledMatch,
  type ReleasedTickets,
} from './match-controls.admin';
import { OperatorReasonBody } from './queue-controls.dto';
import { Answers } from '../../http/openapi/api-answers.decorator';

/** Operator control of live play: cancel a match, release a player's tickets (audited). */
@OperatorController()
export class MatchControlsController {
  constructor(private readonly controls: MatchControlsAdmin) {}

  @Post('matches/:id/cancel')
  @Answers({
    summary:
      'Cancel a match that has not ended (its players are requeued or released; nobody gets a cooldown)',
    caller: 'operator',
    status: 200,
    body: 'CancelledMatch',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.NOT_FOUND,
      ErrorCode.MATCH_STATE_CONFLICT,
    ],
  })
  cancel(
    @Param('id', new UuidParamPipe('match id')) matchId: string,
    @Body() body: OperatorReasonBody,
    @Operator() operator: string,
  ): Promise<CancelledMatch> {
    return this.controls.cancelMatch(matchId, operator, body.reason);
  }

  @Post('players/:id/release-tickets')
  @Answers({
    summary: "Release a player's live tickets",
    caller: 'operator',
    status: 200,
    body: 'ReleasedTickets',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.NOT_FOUND,
      ErrorCode.TICKET_NOT_FOUND,
      ErrorCode.CONFLICT,
    ],
  })
  release(
    @Param('id', new UuidParamPipe('player id')) playerId: string,
    @Body() body: OperatorReasonBody,
    @Operator() operator: string,
  ): Promise<ReleasedTickets> {
    return this.controls.releaseTickets(playerId, operator, body.reason);
  }
}
