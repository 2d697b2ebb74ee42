import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { UuidParamPipe } from '../../http/uuid-input';
import { Operator } from '../operator.decorator';
import { OperatorGuard } from '../operator.guard';
import {
  MatchControlsAdmin,
  type CancelledMatch,
  type ReleasedTickets,
} from './match-controls.admin';
import { OperatorReasonBody } from './queue-controls.dto';

/** Operator control of live play: cancel a match, release a player's tickets (audited). */
@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller(contractPaths('admin'))
export class MatchControlsController {
  constructor(private readonly controls: MatchControlsAdmin) {}

  @Post('matches/:id/cancel')
  @HttpCode(200)
  cancel(
    @Param('id', new UuidParamPipe('match id')) matchId: string,
    @Body() body: OperatorReasonBody,
    @Operator() operator: string,
  ): Promise<CancelledMatch> {
    return this.controls.cancelMatch(matchId, operator, body.reason);
  }

  @Post('players/:id/release-tickets')
  @HttpCode(200)
  release(
    @Param('id', new UuidParamPipe('player id')) playerId: string,
    @Body() body: OperatorReasonBody,
    @Operator() operator: string,
  ): Promise<ReleasedTickets> {
    return this.controls.releaseTickets(playerId, operator, body.reason);
  }
}
