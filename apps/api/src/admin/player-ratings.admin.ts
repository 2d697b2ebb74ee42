import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { AuditWriter, runInTransaction } from '@matchplane/persistence';
import { PlayerRatings, type StoredRating } from '@matchplane/players';
import type { ImportRatingsBody, ImportRatingsResponse, PlayerRatingResponse } from './ratings.dto';

/** The operator's door to players' ratings: read one, import many (audited, all or nothing). */
@Injectable()
export class PlayerRatingsAdmin {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ratings: PlayerRatings,
    private readonly audit: AuditWriter,
  ) {}

  async read(playerId: string): Promise<PlayerRatingResponse> {
    const rating = await this.ratings.read(this.dataSource.manager, playerId);
    if (!rating) throw new CodedError(ErrorCode.PLAYER_NOT_FOUND, `No player ${playerId}`);
    return ratingResponse(rating);
  }

  /**
   * Sets every listed player's rating in one transaction with one `rating.updated` and one
   * audit row each; a repeated or unknown player refuses the whole import (400 naming the entry).
   */
  async import(body: ImportRatingsBody, operator: string): Promise<ImportRatingsResponse> {
    const firstIndex = new Map<string, number>();
    const repeats = body.ratings.flatMap((entry, index) => {
      const key = entry.playerId.toLowerCase();
      const first = firstIndex.get(key);
      if (first === undefined) firstIndex.set(key, index);
      return first === undefined
        ? []
        : [{ field: `ratings.${index}.playerId`, problems: [`repeats ratings.${first}.playerId`] }];
    });
    if (repeats.length > 0) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'A player is listed more than once', {
        errors: repeats,
      });
    }
    const written = await runInTransaction(this.dataSource, async (manager, unit) => {
      const now = new Date();
      const ratings = await this.ratings.importRatings(unit, body.ratings, now);
      await this.audit.recordMany(
        manager,
        ratings.map((rating, index) => ({
          actor: operator,
          action: 'players.rating.imported',
          targetType: 'player',
          targetId: rating.playerId,
          reason: body.reason ?? null,
          details: {
            mu: rating.mu,
            sigma: rating.sigma,
            rating: rating.rating,
            entry: index,
          },
        })),
      );
      return ratings;
    });
    return { imported: written.length, ratings: written.map(ratingResponse) };
  }
}

function ratingResponse(rating: StoredRating): PlayerRatingResponse {
  return {
    playerId: rating.playerId,
    mu: rating.mu,
    sigma: rating.sigma,
    rating: rating.rating,
    revision: rating.revision,
    updatedAt: rating.updatedAt?.toISOString() ?? null,
  };
}
