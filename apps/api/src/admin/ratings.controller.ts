import { ErrorCode } from '@matchplane/contracts';
import { Body, Get, Param, Post } from '@nestjs/common';
import { Operator, OperatorController } from './operator.decorator';
import { PlayerRatingsAdmin } from './player-ratings.admin';
import {
  ImportRatingsBody,
  PlayerIdParams,
  type ImportRatingsResponse,
  type PlayerRatingResponse,
} from './ratings.dto';
import { Answers } from '../http/openapi/api-answers.decorator';

@OperatorController()
export class RatingsController {
  constructor(private readonly ratings: PlayerRatingsAdmin) {}

  @Get('players/:playerId/rating')
  @Answers({
    summary: "A player's rating",
    caller: 'operator',
    status: 200,
    body: 'PlayerRatingResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.PLAYER_NOT_FOUND],
  })
  read(@Param() params: PlayerIdParams): Promise<PlayerRatingResponse> {
    return this.ratings.read(params.playerId);
  }

  @Post('ratings/import')
  @Answers({
    summary: 'Import player ratings',
    caller: 'operator',
    status: 200,
    body: 'ImportRatingsResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON, ErrorCode.PLAYER_NOT_FOUND],
  })
  import(
    @Body() body: ImportRatingsBody,
    @Operator() operator: string,
  ): Promise<ImportRatingsResponse> {
    return this.ratings.import(body, operator);
  }
}
