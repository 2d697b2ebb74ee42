import { Delete, Get, Param, Put } from '@nestjs/common';
import { ErrorCode, type BlockListResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { Answers } from '../http/openapi/api-answers.decorator';
import { UuidParamPipe } from '../http/uuid-input';
import { BlockListService } from './block-list.service';
import { PlayerController } from '../auth/player-controller.decorator';

/** The session's player's block list: whom the matcher never puts in a match with it. */
@PlayerController('blocks')
export class BlocksController {
  constructor(private readonly lists: BlockListService) {}

  @Get()
  @Answers({
    summary: 'The players this player blocked',
    caller: 'player',
    status: 200,
    body: 'BlockListResponse',
    errors: [],
  })
  list(@CurrentSession() session: AuthenticatedSession): Promise<BlockListResponse> {
    return this.lists.list('block', session.playerId);
  }

  @Put(':playerId')
  @Answers({
    summary:
      'Block a player: the matcher never puts the two in one match (a repeat changes nothing; an avoided player moves to this list)',
    caller: 'player',
    status: 200,
    body: 'BlockListResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.PLAYER_NOT_FOUND, ErrorCode.BLOCK_LIST_FULL],
  })
  block(
    @CurrentSession() session: AuthenticatedSession,
    @Param('playerId', new UuidParamPipe('player id')) playerId: string,
  ): Promise<BlockListResponse> {
    return this.lists.add('block', session.playerId, playerId);
  }

  @Delete(':playerId')
  @Answers({
    summary: 'Unblock a player (one not on the list changes nothing)',
    caller: 'player',
    status: 200,
    body: 'BlockListResponse',
    errors: [ErrorCode.VALIDATION_FAILED],
  })
  unblock(
    @CurrentSession() session: AuthenticatedSession,
    @Param('playerId', new UuidParamPipe('player id')) playerId: string,
  ): Promise<BlockListResponse> {
    return this.lists.remove('block', session.playerId, playerId);
  }
}
