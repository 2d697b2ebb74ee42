import { Delete, Get, Param, Put } from '@nestjs/common';
import { ErrorCode, type AvoidListResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { PlayerController } from '../auth/player-controller.decorator';
import { Answers } from '../http/openapi/api-answers.decorator';
import { UuidParamPipe } from '../http/uuid-input';
import { BlockListService } from './block-list.service';

/**
 * The session's player's avoid list: whom the matcher puts in a match with it only when nothing
 * else fits (docs/decisions/2026-12-07-avoid-lists.md).
 */
@PlayerController('avoids', 'blocks')
export class AvoidsController {
  constructor(private readonly lists: BlockListService) {}

  @Get()
  @Answers({
    summary: 'The players this player avoids',
    caller: 'player',
    status: 200,
    body: 'AvoidListResponse',
    errors: [],
  })
  list(@CurrentSession() session: AuthenticatedSession): Promise<AvoidListResponse> {
    return this.lists.list('avoid', session.playerId);
  }

  @Put(':playerId')
  @Answers({
    summary:
      'Avoid a player: the matcher puts the two in one match only when nothing else fits (a repeat changes nothing; a blocked player moves to this list)',
    caller: 'player',
    status: 200,
    body: 'AvoidListResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.PLAYER_NOT_FOUND, ErrorCode.AVOID_LIST_FULL],
  })
  avoid(
    @CurrentSession() session: AuthenticatedSession,
    @Param('playerId', new UuidParamPipe('player id')) playerId: string,
  ): Promise<AvoidListResponse> {
    return this.lists.add('avoid', session.playerId, playerId);
  }

  @Delete(':playerId')
  @Answers({
    summary: 'Stop avoiding a player (one not on the list changes nothing)',
    caller: 'player',
    status: 200,
    body: 'AvoidListResponse',
    errors: [ErrorCode.VALIDATION_FAILED],
  })
  unavoid(
    @CurrentSession() session: AuthenticatedSession,
    @Param('playerId', new UuidParamPipe('player id')) playerId: string,
  ): Promise<AvoidListResponse> {
    return this.lists.remove('avoid', session.playerId, playerId);
  }
}
