import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ratings (issue 13): each player's openskill skill, `rating_mu` and `rating_sigma`, beside the
 * display rating `rating` the matcher reads (rating = 1500 + 48 x (mu - 3 sigma), libs/domain
 * `displayRating`). Existing players keep their display rating: they get openskill's prior
 * uncertainty (25/3) and the mean that shows as their rating at it, so a new player (1500) is
 * openskill's prior (25, 25/3) exactly. `rating_revision` orders a player's `rating.updated`
 * events (the outbox revision of the player aggregate). Queue tickets copy the sigma with the
 * rating at enqueue, for team balance.
 */
export class PlayerSkill1764600000000 implements MigrationInterface {
  name = 'PlayerSkill1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE players
        ADD COLUMN rating_mu double precision NOT NULL DEFAULT 25,
        ADD COLUMN rating_sigma double precision NOT NULL DEFAULT 25.0 / 3,
        ADD COLUMN rating_revision bigint NOT NULL DEFAULT 0,
        ADD COLUMN rating_updated_at timestamptz,
        ADD CONSTRAINT players_rating_mu_finite
          CHECK (rating_mu > '-Infinity'::float8 AND rating_mu < 'Infinity'::float8),
        ADD CONSTRAINT players_rating_sigma_positive
          CHECK (rating_sigma > 0 AND rating_sigma < 'Infinity'::float8),
        ADD CONSTRAINT players_rating_revision_non_negative CHECK (rating_revision >= 0)`);
    await queryRunner.query(
      `UPDATE players SET rating_mu = (rating - 1500) / 48.0 + 3 * rating_sigma WHERE rating <> 1500`,
    );
    await queryRunner.query(`
      ALTER TABLE queue_tickets
        ADD COLUMN rating_sigma double precision NOT NULL DEFAULT 25.0 / 3
          CONSTRAINT queue_tickets_rating_sigma_positive
          CHECK (rating_sigma > 0 AND rating_sigma < 'Infinity'::float8)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets DROP COLUMN rating_sigma`);
    await queryRunner.query(`
      ALTER TABLE players
        DROP COLUMN rating_updated_at,
        DROP COLUMN rating_revision,
        DROP COLUMN rating_sigma,
        DROP COLUMN rating_mu`);
  }
}
