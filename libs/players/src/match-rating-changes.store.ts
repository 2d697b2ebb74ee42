import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SkillRating } from '@matchplane/domain';

/** A player's rating before and after one rated match. */
export interface MatchRatingChange {
  readonly matchId: string;
  readonly previousRating: number;
  readonly rating: number;
  readonly previous: SkillRating;
  readonly after: SkillRating;
}

interface ChangeRow {
  match_id: string;
  previous_rating: number;
  rating: number;
  previous_mu: number;
  mu: number;
  previous_sigma: number;
  sigma: number;
}

/**
 * Owns `match_rating_changes`: what each rated match did to each player's rating, kept with the
 * match (the `rating.updated` events leave the outbox sooner) for the player's match history.
 */
@Injectable()
export class MatchRatingChanges {
  /** Records the changes one match result made, in the caller's transaction. */
  async record(
    manager: EntityManager,
    matchId: string,
    changes: readonly {
      playerId: string;
      previousRating: number;
      rating: number;
      previous: SkillRating;
      after: SkillRating;
    }[],
  ): Promise<void> {
    if (changes.length === 0) return;
    await manager.query(
      `INSERT INTO match_rating_changes
         (match_id, player_id, previous_rating, rating, previous_mu, mu, previous_sigma, sigma)
       SELECT $1, u.* FROM unnest($2::uuid[], $3::float8[], $4::float8[], $5::float8[],
                                  $6::float8[], $7::float8[], $8::float8[])
                      AS u(player_id, previous_rating, rating, previous_mu, mu, previous_sigma, sigma)`,
      [
        matchId,
        changes.map((c) => c.playerId),
        changes.map((c) => c.previousRating),
        changes.map((c) => c.rating),
        changes.map((c) => c.previous.mu),
        changes.map((c) => c.after.mu),
        changes.map((c) => c.previous.sigma),
        changes.map((c) => c.after.sigma),
      ],
    );
  }

  /** `playerId`'s rating change in each of `matchIds` that rated them. */
  async ofPlayer(
    manager: EntityManager,
    playerId: string,
    matchIds: readonly string[],
  ): Promise<Map<string, MatchRatingChange>> {
    if (matchIds.length === 0) return new Map();
    const rows = await manager.query<ChangeRow[]>(
      `SELECT match_id, previous_rating, rating, previous_mu, mu, previous_sigma, sigma
         FROM match_rating_changes WHERE player_id = $1 AND match_id = ANY($2::uuid[])`,
      [playerId, matchIds],
    );
    return new Map(
      rows.map((row) => [
        row.match_id,
        {
          matchId: row.match_id,
          previousRating: row.previous_rating,
          rating: row.rating,
          previous: { mu: row.previous_mu, sigma: row.previous_sigma },
          after: { mu: row.mu, sigma: row.sigma },
        },
      ]),
    );
  }
}
