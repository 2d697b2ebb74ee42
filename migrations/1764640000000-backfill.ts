import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Backfill (issue 14): a game server's request for players to fill open places on a team of a
 * running match (`backfill_requests`, its own aggregate with its own revisions and events), the
 * request that added each later participant (`match_participants.backfill_request_id`), and
 * numbered roster revisions (`roster_manifests.revision`): a backfill publishes revision 2, 3, ...
 * over the whole current roster, and earlier revisions stay as history.
 */
export class Backfill1764640000000 implements MigrationInterface {
  name = 'Backfill1764640000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE backfill_requests (
        id uuid PRIMARY KEY,
        match_id uuid NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        mode text NOT NULL,
        team integer NOT NULL CONSTRAINT backfill_requests_team_non_negative CHECK (team >= 0),
        slots integer NOT NULL CONSTRAINT backfill_requests_slots_range CHECK (slots BETWEEN 1 AND 64),
        server_region text NOT NULL,
        team_rating double precision NOT NULL,
        attributes jsonb NOT NULL DEFAULT '{}'::jsonb
          CONSTRAINT backfill_requests_attributes_is_object CHECK (jsonb_typeof(attributes) = 'object'),
        state text NOT NULL CONSTRAINT backfill_requests_state_valid
          CHECK (state IN ('OPEN', 'MATCHED', 'PUBLISHED', 'ASSIGNED', 'FILLED', 'CANCELLED', 'EXPIRED')),
        reason text,
        revision bigint NOT NULL CONSTRAINT backfill_requests_revision_positive CHECK (revision >= 1),
        player_ids uuid[] NOT NULL DEFAULT '{}',
        roster_revision integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CONSTRAINT backfill_requests_finished_has_finished_at
          CHECK ((state IN ('FILLED', 'CANCELLED', 'EXPIRED')) = (finished_at IS NOT NULL))
      )`);
    // One live request per team: a second one while the first is under way would double-fill.
    await queryRunner.query(
      `CREATE UNIQUE INDEX backfill_requests_one_live_per_team ON backfill_requests (match_id, team)
        WHERE state IN ('OPEN', 'MATCHED', 'PUBLISHED', 'ASSIGNED')`,
    );
    // The matcher's read each pass: a mode's open requests, oldest first.
    await queryRunner.query(
      `CREATE INDEX backfill_requests_open_by_mode ON backfill_requests (mode, created_at)
        WHERE state = 'OPEN'`,
    );
    // Reconciliation's read: live requests past their deadline.
    await queryRunner.query(
      `CREATE INDEX backfill_requests_live_by_expiry ON backfill_requests (expires_at)
        WHERE state IN ('OPEN', 'MATCHED', 'PUBLISHED', 'ASSIGNED')`,
    );
    await queryRunner.query(
      `ALTER TABLE match_participants ADD COLUMN backfill_request_id uuid
         REFERENCES backfill_requests (id) ON DELETE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE roster_manifests
         ADD COLUMN revision integer NOT NULL DEFAULT 1
           CONSTRAINT roster_manifests_revision_positive CHECK (revision >= 1)`,
    );
    await queryRunner.query(
      `ALTER TABLE roster_manifests DROP CONSTRAINT roster_manifests_pkey,
         ADD PRIMARY KEY (match_id, revision)`,
    );
    // The players a revision lists (a revision drops no-shows and adds the backfilled); NULL on
    // rows published before: those list every assignment of their match.
    await queryRunner.query(`ALTER TABLE roster_manifests ADD COLUMN player_ids uuid[]`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM roster_manifests WHERE revision > 1`);
    await queryRunner.query(
      `ALTER TABLE roster_manifests DROP CONSTRAINT roster_manifests_pkey,
         ADD PRIMARY KEY (match_id)`,
    );
    await queryRunner.query(
      `ALTER TABLE roster_manifests DROP COLUMN player_ids, DROP COLUMN revision`,
    );
    await queryRunner.query(`ALTER TABLE match_participants DROP COLUMN backfill_request_id`);
    await queryRunner.query(`DROP TABLE backfill_requests`);
  }
}
