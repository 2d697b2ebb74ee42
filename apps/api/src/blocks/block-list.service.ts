import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, type AvoidListResponse, type BlockListResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { PlayerBlocks, type PlayerListKind } from '@matchplane/players';
import { ApiConfig } from '../api.config';

/** What each list is called in a refusal, and the code of a full one. */
const LISTS = {
  block: { verb: 'block', full: ErrorCode.BLOCK_LIST_FULL, remedy: 'unblock one first' },
  avoid: { verb: 'avoid', full: ErrorCode.AVOID_LIST_FULL, remedy: 'remove one first' },
} as const satisfies Record<PlayerListKind, unknown>;

/** The session's player's block and avoid lists: read, add (bounded), remove. */
@Injectable()
export class BlockListService {
  private readonly maxEntries: Record<PlayerListKind, number>;

  constructor(
    private readonly blocks: PlayerBlocks,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.maxEntries = {
      block: config.PLAYER_BLOCK_LIST_MAX_ENTRIES,
      avoid: config.PLAYER_AVOID_LIST_MAX_ENTRIES,
    };
  }

  async list(playerId: string): Promise<BlockListResponse> {
    const blocked = await this.blocks.list(playerId, 'block');
    return {
      blocked: blocked.map(({ playerId: id, listedAt }) => ({
        playerId: id,
        blockedAt: listedAt.toISOString(),
      })),
      maxEntries: this.maxEntries.block,
    };
  }

  async avoidList(playerId: string): Promise<AvoidListResponse> {
    const avoided = await this.blocks.list(playerId, 'avoid');
    return {
      avoided: avoided.map(({ playerId: id, listedAt }) => ({
        playerId: id,
        avoidedAt: listedAt.toISOString(),
      })),
      maxEntries: this.maxEntries.avoid,
    };
  }

  /** Blocks `blockedPlayerId` (a repeat changes nothing; an avoided player moves) and answers the list. */
  async block(playerId: string, blockedPlayerId: string): Promise<BlockListResponse> {
    await this.add('block', playerId, blockedPlayerId);
    return this.list(playerId);
  }

  /** Avoids `avoidedPlayerId` (a repeat changes nothing; a blocked player moves) and answers the list. */
  async avoid(playerId: string, avoidedPlayerId: string): Promise<AvoidListResponse> {
    await this.add('avoid', playerId, avoidedPlayerId);
    return this.avoidList(playerId);
  }

  /** Unblocks (a player not on the list changes nothing) and answers the list. */
  async unblock(playerId: string, blockedPlayerId: string): Promise<BlockListResponse> {
    await this.blocks.remove(playerId, blockedPlayerId, 'block');
    return this.list(playerId);
  }

  /** Stops avoiding (a player not on the list changes nothing) and answers the list. */
  async unavoid(playerId: string, avoidedPlayerId: string): Promise<AvoidListResponse> {
    await this.blocks.remove(playerId, avoidedPlayerId, 'avoid');
    return this.avoidList(playerId);
  }

  private async add(kind: PlayerListKind, playerId: string, otherPlayerId: string): Promise<void> {
    const { verb, full, remedy } = LISTS[kind];
    if (otherPlayerId === playerId) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, `A player cannot ${verb} itself`);
    }
    const max = this.maxEntries[kind];
    const outcome = await this.blocks.add(playerId, otherPlayerId, max, kind);
    if (outcome === 'unknown_player') {
      throw new CodedError(ErrorCode.PLAYER_NOT_FOUND, `No player has id ${otherPlayerId}`);
    }
    if (outcome === 'list_full') {
      throw new CodedError(
        full,
        `The ${verb} list holds ${max} players, as many as it may: ${remedy} to add ${otherPlayerId}`,
      );
    }
  }
}
