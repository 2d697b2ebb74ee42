import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Parties (apps/api/src/parties): a leader and up to the largest team size of members, joined with
 * an expiring invite code (only its SHA-256 is kept); a player is in at most one party. A party
 * queues as a party ticket: one queue ticket per member, sharing `party_ticket_id` and
 * `party_size`, so every per-player path (heartbeats, ticket events, match participants,
 * assignments, join tokens) is unchanged and the matcher groups the members back together.
 */
export class Parties1764620000000 implements MigrationInterface {
  name = 'Parties1764620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE parties (
        id uuid PRIMARY KEY,
        leader_id uuid NOT NULL REFERENCES players (id),
        invite_code_hash bytea NOT NULL UNIQUE,
        invite_expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE party_members (
        party_id uuid NOT NULL REFERENCES parties (id) ON DELETE CASCADE,
        -- UNIQUE: a player is in at most one party; a race of two joins is decided here.
        player_id uuid NOT NULL UNIQUE REFERENCES players (id),
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (party_id, player_id)
      )`);
    await queryRunner.query(`
      ALTER TABLE queue_tickets
        ADD COLUMN party_ticket_id uuid,
        ADD COLUMN party_size smallint,
        ADD CONSTRAINT queue_tickets_party_complete CHECK (
          (party_ticket_id IS NULL AND party_size IS NULL)
          OR (party_ticket_id IS NOT NULL AND party_size >= 2))`);
    // A member's cancel or expiry finds its party mates through it.
    await queryRunner.query(
      `CREATE INDEX queue_tickets_party_ticket_idx ON queue_tickets (party_ticket_id) WHERE party_ticket_id IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX queue_tickets_party_ticket_idx`);
    await queryRunner.query(`
      ALTER TABLE queue_tickets
        DROP CONSTRAINT queue_tickets_party_complete,
        DROP COLUMN party_size,
        DROP COLUMN party_ticket_id`);
    await queryRunner.query(`DROP TABLE party_members`);
    await queryRunner.query(`DROP TABLE parties`);
  }
}
