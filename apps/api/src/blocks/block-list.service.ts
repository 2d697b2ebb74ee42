import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, type AvoidListResponse, type BlockListResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { PlayerBlocks, type ListedPlayer, type PlayerListKind } from '@matchplane/players';
import { ApiConfig } from '../api.config';

/** Each list's answer on the wire. */
export interface PlayerListResponses {
  block: BlockListResponse;
  avoid: AvoidListResponse;
}

/** Each list's wire names, what a refusal calls it, and the code of a full one. */
const LISTS = {
  block: {
    entries: 'blocked',
    listedAt: 'blockedAt',
    verb: 'block',
    full: ErrorCode.BLOCK_LIST_FULL,
    remedy: 'unblock one first',
  },
  avoid: {
    entries: 'avoided',
    listedAt: 'avoidedAt',
    verb: 'avoid',
    full: ErrorCode.AVOID_LIST_FULL,
    remedy: 'remove one first',
  },
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

  /** `playerId`'s list of `kind`, oldest entry first. */
  async list<K extends PlayerListKind>(kind: K, playerId: string): Promise<PlayerListResponses[K]> {
    const listed = await this.blocks.list(playerId, kind);
    return answer(kind, listed, this.maxEntries[kind]);
  }

  /**
   * Puts `otherPlayerId` on the list of `kind` (a repeat changes nothing; a player on the other
   * list moves) and answers the list.
   */
  async add<K extends PlayerListKind>(
    kind: K,
    playerId: string,
    otherPlayerId: string,
  ): Promise<PlayerListResponses[K]> {
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
    return this.list(kind, playerId);
  }

  /** Takes `otherPlayerId` off the list of `kind` (one not on it changes nothing) and answers the list. */
  async remove<K extends PlayerListKind>(
    kind: K,
    playerId: string,
    otherPlayerId: string,
  ): Promise<PlayerListResponses[K]> {
    await this.blocks.remove(playerId, otherPlayerId, kind);
    return this.list(kind, playerId);
  }
}

function answer<K extends PlayerListKind>(
  kind: K,
  listed: readonly ListedPlayer[],
  maxEntries: number,
): PlayerListResponses[K] {
  const { entries, listedAt } = LISTS[kind];
  const wire = listed.map((entry) => ({
    playerId: entry.playerId,
    [listedAt]: entry.listedAt.toISOString(),
  }));
  // The entry and timestamp names come from LISTS[kind], which is what PlayerListResponses[K] names.
  return { [entries]: wire, maxEntries } as unknown as PlayerListResponses[K];
}
