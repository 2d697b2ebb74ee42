import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { Operator } from './operator.decorator';
import { OperatorGuard } from './operator.guard';
import { PlayerRatingsAdmin } from './player-ratings.admin';
import {
  ImportRatingsBody,
  PlayerIdParams,
  type ImportRatingsResponse,
  type PlayerRatingResponse,
} from './ratings.dto';

@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller(contractPaths('admin'))
export class RatingsController {
  constructor(private readonly ratings: PlayerRatingsAdmin) {}

  @Get('players/:playerId/rating')
  read(@Param() params: PlayerIdParams): Promise<PlayerRatingResponse> {
    return this.ratings.read(params.playerId);
  }

  @Post('ratings/import')
  @HttpCode(200)
  import(
    @Body() body: ImportRatingsBody,
    @Operator() operator: string,
  ): Promise<ImportRatingsResponse> {
    return this.ratings.import(body, operator);
  }
}
