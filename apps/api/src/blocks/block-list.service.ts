import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, type BlockListResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { PlayerBlocks } from '@matchplane/players';
import { ApiConfig } from '../api.config';

/** The session's player's block list: read, add (bounded), remove. */
@Injectable()
export class BlockListService {
  private readonly maxEntries: number;

  constructor(
    private readonly blocks: PlayerBlocks,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.maxEntries = config.PLAYER_BLOCK_LIST_MAX_ENTRIES;
  }

  async list(playerId: string): Promise<BlockListResponse> {
    const blocked = await this.blocks.list(playerId);
    return {
      blocked: blocked.map((entry) => ({
        playerId: entry.playerId,
        blockedAt: entry.blockedAt.toISOString(),
      })),
      maxEntries: this.maxEntries,
    };
  }

  /** Blocks `blockedPlayerId` (a repeat changes nothing) and answers the list. */
  async block(playerId: string, blockedPlayerId: string): Promise<BlockListResponse> {
    if (blockedPlayerId === playerId) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'A player cannot block itself');
    }
    const outcome = await this.blocks.add(playerId, blockedPlayerId, this.maxEntries);
    if (outcome === 'unknown_player') {
      throw new CodedError(ErrorCode.PLAYER_NOT_FOUND, `No player has id ${blockedPlayerId}`);
    }
    if (outcome === 'list_full') {
      throw new CodedError(
        ErrorCode.BLOCK_LIST_FULL,
        `The block list holds ${this.maxEntries} players, as many as it may: unblock one first`,
      );
    }
    return this.list(playerId);
  }

  /** Unblocks (a player not on the list changes nothing) and answers the list. */
  async unblock(playerId: string, blockedPlayerId: string): Promise<BlockListResponse> {
    await this.blocks.remove(playerId, blockedPlayerId);
    return this.list(playerId);
  }
}
