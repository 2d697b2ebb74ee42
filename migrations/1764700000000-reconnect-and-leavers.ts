import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconnect and leavers (issue 30): a participant's presence in its running match, kept on its
 * roster row (owned by libs/matches, MatchPresenceStore). `left_at` is set while the player is
 * away (cleared on a rejoin), `rejoin_deadline` is when the grace window closes, `leave_count`
 * counts the leaves, `abandoned_at` is final. The partial index serves the abandonment stage.
 */
export class ReconnectAndLeavers1764700000000 implements MigrationInterface {
  name = 'ReconnectAndLeavers1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE match_participants
        ADD COLUMN left_at timestamptz,
        ADD COLUMN rejoin_deadline timestamptz,
        ADD COLUMN leave_count integer NOT NULL DEFAULT 0,
        ADD COLUMN abandoned_at timestamptz,
        ADD CONSTRAINT match_participants_left_has_deadline
          CHECK ((left_at IS NULL) = (rejoin_deadline IS NULL)),
        ADD CONSTRAINT match_participants_leave_count_valid CHECK (leave_count >= 0)`);
    await queryRunner.query(`
      CREATE INDEX match_participants_rejoin_deadline_idx
        ON match_participants (rejoin_deadline)
        WHERE rejoin_deadline IS NOT NULL AND abandoned_at IS NULL`);
    // Offences decay (NO_SHOW_OFFENCE_DECAY_SECONDS): when the last one was recorded (libs/players).
    await queryRunner.query(`ALTER TABLE players ADD COLUMN last_offence_at timestamptz`);
    // A fresh join token per player who left (libs/allocation RejoinTokenStore; the allocator signs).
    await queryRunner.query(`
      CREATE TABLE rejoin_tokens (
        match_id uuid NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        player_id uuid NOT NULL,
        join_token text NOT NULL,
        key_id text NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (match_id, player_id),
        CONSTRAINT rejoin_tokens_expiry_valid CHECK (expires_at > issued_at)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE rejoin_tokens`);
    await queryRunner.query(`ALTER TABLE players DROP COLUMN last_offence_at`);
    await queryRunner.query(`DROP INDEX match_participants_rejoin_deadline_idx`);
    await queryRunner.query(`
      ALTER TABLE match_participants
        DROP CONSTRAINT match_participants_leave_count_valid,
        DROP CONSTRAINT match_participants_left_has_deadline,
        DROP COLUMN abandoned_at,
        DROP COLUMN leave_count,
        DROP COLUMN rejoin_deadline,
        DROP COLUMN left_at`);
  }
}
