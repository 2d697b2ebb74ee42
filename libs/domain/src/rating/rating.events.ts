import type { DomainEventOf } from '../shared/domain.event';

export const RATING_UPDATED = 'rating.updated';

/** Why a player's rating changed. */
export const RatingUpdateReason = {
  /** A match the player played completed with a result (see rateMatch). */
  MATCH_RESULT: 'MATCH_RESULT',
  /** An operator imported ratings (POST /v1/admin/ratings/import). */
  OPERATOR_IMPORT: 'OPERATOR_IMPORT',
} as const;
export type RatingUpdateReason = (typeof RatingUpdateReason)[keyof typeof RatingUpdateReason];

/**
 * A player's rating after a change, and before it. Flat numbers (openskill's mu and sigma, and the
 * display rating derived from them) so consumers need no rating library.
 */
export interface RatingUpdatedPayload {
  readonly playerId: string;
  readonly reason: RatingUpdateReason;
  /** Present exactly when `reason` is MATCH_RESULT: the match whose result moved the rating. */
  readonly matchId?: string;
  readonly mu: number;
  readonly sigma: number;
  readonly rating: number;
  readonly previousMu: number;
  readonly previousSigma: number;
  readonly previousRating: number;
}

/** One per rated player; the aggregate is the player, its revision the rating's revision. */
export type RatingUpdated = DomainEventOf<typeof RATING_UPDATED, 'player', RatingUpdatedPayload>;
