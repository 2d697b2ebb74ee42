import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import {
  displayRating,
  RATING_UPDATED,
  rateMatch,
  RatingUpdateReason,
  type RatedParticipant,
  type RatingUpdatedPayload,
  type ReportedResult,
  type SkillRating,
} from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { buildEnvelope, OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import type { UnitOfWork } from '@matchplane/persistence';
import { MatchRatingChanges } from './match-rating-changes.store';

/** A player's rating as stored: openskill's mu and sigma, the display rating, and its revision. */
export interface StoredRating extends SkillRating {
  readonly playerId: string;
  /** The display rating (libs/domain `displayRating`): what the matcher's rating window reads. */
  readonly rating: number;
  /** How many times it changed (the revision of its last `rating.updated`); 0: never. */
  readonly revision: number;
  /** When it last changed; null: never (openskill's prior or the migrated rating). */
  readonly updatedAt: Date | null;
}

/** A participant of a finished match, as the result route knows it. */
export interface FinishedParticipant {
  readonly playerId: string;
  readonly team: number;
  readonly connected: boolean;
  /** Left and not back within the grace window: rated a loss (libs/domain rateMatch). */
  readonly abandoned?: boolean;
}

export interface RatingImport extends SkillRating {
  readonly playerId: string;
}

interface RatingRow {
  id: string;
  rating_mu: number;
  rating_sigma: number;
  rating: number;
  rating_revision: string;
  rating_updated_at: Date | null;
}

interface RatingWrite {
  readonly before: StoredRating;
  readonly after: SkillRating;
}

const RATING_COLUMNS = 'id, rating_mu, rating_sigma, rating, rating_revision, rating_updated_at';

/**
 * Players' ratings (the players module owns `players`): every change is written with its
 * `rating.updated` event (aggregate: the player, revision `rating_revision`) in the caller's
 * transaction, under the player rows' locks, so a rating and its event commit together with the
 * change that caused it (a match COMPLETED, an operator import).
 */
@Injectable()
export class PlayerRatings {
  constructor(
    private readonly outbox: OutboxWriter,
    private readonly signal: OutboxSignal,
    private readonly matchChanges: MatchRatingChanges,
  ) {}

  async read(manager: EntityManager, playerId: string): Promise<StoredRating | undefined> {
    const rows = await manager.query<RatingRow[]>(
      `SELECT ${RATING_COLUMNS} FROM players WHERE id = $1`,
      [playerId],
    );
    return rows[0] ? toRating(rows[0]) : undefined;
  }

  /**
   * Rates the players of a match that just ended with `result` (libs/domain `rateMatch`: only a
   * COMPLETED result, only connected players), in `unit`'s transaction; the relay is woken once it
   * commits. Answers the ratings written (none when the rule rates nobody).
   */
  async rateMatchResult(
    unit: UnitOfWork,
    matchId: string,
    participants: readonly FinishedParticipant[],
    result: ReportedResult,
    now: Date,
  ): Promise<StoredRating[]> {
    if (result.outcome !== 'COMPLETED') return [];
    const stored = await this.lock(
      unit.manager,
      participants.filter((p) => p.connected).map((p) => p.playerId),
    );
    const rated: RatedParticipant[] = participants.flatMap((participant) => {
      const rating = stored.get(participant.playerId);
      // A player row cannot vanish under a match (foreign keys); a disconnected one is not read.
      return rating ? [{ ...participant, skill: rating }] : [];
    });
    const writes = rateMatch(rated, result).map((change) => ({
      before: stored.get(change.playerId) as StoredRating,
      after: change.after,
    }));
    const written = await this.write(
      unit,
      writes,
      { reason: RatingUpdateReason.MATCH_RESULT, matchId },
      now,
    );
    await this.matchChanges.record(
      unit.manager,
      matchId,
      writes.map(({ before }, index) => ({
        playerId: before.playerId,
        previousRating: before.rating,
        rating: (written[index] as StoredRating).rating,
        previous: before,
        after: written[index] as StoredRating,
      })),
    );
    return written;
  }

  /**
   * Sets the ratings of existing players (an operator import), all or none, in `unit`'s
   * transaction; the relay is woken once it commits. Entries are validated by the caller; an
   * unknown player is a 400 naming its entry.
   */
  async importRatings(
    unit: UnitOfWork,
    entries: readonly RatingImport[],
    now: Date,
  ): Promise<StoredRating[]> {
    const stored = await this.lock(
      unit.manager,
      entries.map((entry) => entry.playerId),
    );
    const unknown = entries
      .map((entry, index) => ({ entry, index }))
      .filter(({ entry }) => !stored.has(entry.playerId));
    if (unknown.length > 0) {
      throw new CodedError(
        ErrorCode.VALIDATION_FAILED,
        `No such player: ${unknown.map(({ entry }) => entry.playerId).join(', ')}`,
        {
          errors: unknown.map(({ index }) => ({
            field: `ratings.${index}.playerId`,
            problems: ['no player has this id'],
          })),
        },
      );
    }
    return this.write(
      unit,
      entries.map((entry) => ({
        before: stored.get(entry.playerId) as StoredRating,
        after: { mu: entry.mu, sigma: entry.sigma },
      })),
      { reason: RatingUpdateReason.OPERATOR_IMPORT },
      now,
    );
  }

  /** The players' ratings, their rows locked in id order (two writers never wait on each other in a cycle). */
  private async lock(
    manager: EntityManager,
    playerIds: readonly string[],
  ): Promise<Map<string, StoredRating>> {
    if (playerIds.length === 0) return new Map();
    // FOR NO KEY UPDATE: tickets and sessions hold FOR KEY SHARE on these rows through their
    // foreign keys, which FOR UPDATE would conflict with (see PlayerStore.queueEntryProfile).
    const rows = await manager.query<RatingRow[]>(
      `SELECT ${RATING_COLUMNS} FROM players WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [[...new Set(playerIds)]],
    );
    return new Map(rows.map((row) => [row.id, toRating(row)]));
  }

  /** The new ratings and one `rating.updated` each, in one statement. */
  private async write(
    unit: UnitOfWork,
    writes: readonly RatingWrite[],
    cause: { reason: RatingUpdateReason; matchId?: string },
    now: Date,
  ): Promise<StoredRating[]> {
    if (writes.length === 0) return [];
    const written = writes.map(({ before, after }): StoredRating => ({
      playerId: before.playerId,
      mu: after.mu,
      sigma: after.sigma,
      rating: displayRating(after),
      revision: before.revision + 1,
      updatedAt: now,
    }));
    const envelopes = writes.map(({ before }, index) => {
      const after = written[index] as StoredRating;
      const payload: RatingUpdatedPayload = {
        playerId: before.playerId,
        reason: cause.reason,
        ...(cause.matchId === undefined ? {} : { matchId: cause.matchId }),
        mu: after.mu,
        sigma: after.sigma,
        rating: after.rating,
        previousMu: before.mu,
        previousSigma: before.sigma,
        previousRating: before.rating,
      };
      return buildEnvelope({
        event: RATING_UPDATED,
        aggregateType: 'player',
        aggregateId: before.playerId,
        revision: after.revision,
        occurredAt: now,
        playerIds: [before.playerId],
        payload,
      });
    });
    const parameters = [
      written.map((r) => r.playerId),
      written.map((r) => r.mu),
      written.map((r) => r.sigma),
      written.map((r) => r.rating),
      written.map((r) => r.revision),
      now,
    ];
    const events = this.outbox.appendSql(envelopes, parameters, 'changed');
    // The revision guard cannot miss under the rows' locks; the count proves it did not.
    const [row] = await unit.manager.query<{ changed: number }[]>(
      `WITH changed AS (
         UPDATE players p
            SET rating_mu = u.mu, rating_sigma = u.sigma, rating = u.rating,
                rating_revision = u.revision, rating_updated_at = $6, updated_at = now()
           FROM unnest($1::uuid[], $2::float8[], $3::float8[], $4::float8[], $5::bigint[])
                  AS u(id, mu, sigma, rating, revision)
          WHERE p.id = u.id AND p.rating_revision = u.revision - 1
          RETURNING p.id
       ), appended AS (${events.sql})
       SELECT count(*)::int AS changed FROM changed`,
      [...parameters, ...events.parameters],
    );
    if (row?.changed !== written.length) {
      throw new Error(`rating update wrote ${row?.changed} of ${written.length} players`);
    }
    this.signal.wakeAfter(unit);
    return written;
  }
}

function toRating(row: RatingRow): StoredRating {
  return {
    playerId: row.id,
    mu: row.rating_mu,
    sigma: row.rating_sigma,
    rating: row.rating,
    revision: Number(row.rating_revision),
    updatedAt: row.rating_updated_at,
  };
}
