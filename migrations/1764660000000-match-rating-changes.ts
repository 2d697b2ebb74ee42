import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A player's rating before and after each rated match, for the player's match history
 * (GET /v1/matches/history): the `rating.updated` events carry the same figures but leave the
 * outbox with its retention. Owned by libs/players (PlayerRatings writes a row with each
 * match-result rating change); the rows go with their match when retention deletes it.
 */
export class MatchRatingChanges1764660000000 implements MigrationInterface {
  name = 'MatchRatingChanges1764660000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE match_rating_changes (
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        match_id uuid NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        previous_rating double precision NOT NULL,
        rating double precision NOT NULL,
        previous_mu double precision NOT NULL,
        mu double precision NOT NULL,
        previous_sigma double precision NOT NULL,
        sigma double precision NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (player_id, match_id)
      )`);
    // The cascade from a purged match finds its rows by match.
    await queryRunner.query(
      `CREATE INDEX match_rating_changes_match_id_idx ON match_rating_changes (match_id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE match_rating_changes`);
  }
}
