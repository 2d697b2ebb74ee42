import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Lobbies (apps/api/src/lobbies): a private lobby an owner creates for a mode, that others join
 * with its invite code (only its SHA-256 is kept); the owner arranges the teams and starts it,
 * which creates the match directly (no matcher). A player is in at most one lobby. An idle lobby
 * expires (`expires_at`, pushed back by every change). `matches.rated`: an unranked lobby's match
 * changes no rating when it completes. `queue_tickets.origin`: a lobby member's ticket is no queue
 * arrival (the operator's capture of arrivals, which the simulator replays, leaves it out).
 */
export class Lobbies1764725000000 implements MigrationInterface {
  name = 'Lobbies1764725000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE lobbies (
        id uuid PRIMARY KEY,
        owner_id uuid NOT NULL REFERENCES players (id),
        invite_code_hash bytea NOT NULL UNIQUE,
        mode text NOT NULL,
        size smallint NOT NULL CHECK (size >= 2),
        region text,
        ranked boolean NOT NULL DEFAULT false,
        state text NOT NULL DEFAULT 'OPEN' CHECK (state IN ('OPEN', 'STARTED')),
        match_id uuid,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT lobbies_started_has_match CHECK ((state = 'STARTED') = (match_id IS NOT NULL))
      )`);
    // The opportunistic purge of expired lobbies reads by expiry.
    await queryRunner.query(`CREATE INDEX lobbies_expires_at_idx ON lobbies (expires_at)`);
    await queryRunner.query(`
      CREATE TABLE lobby_members (
        lobby_id uuid NOT NULL REFERENCES lobbies (id) ON DELETE CASCADE,
        -- UNIQUE: a player is in at most one lobby; a race of two joins is decided here.
        player_id uuid NOT NULL UNIQUE REFERENCES players (id),
        team smallint,
        ticket_id uuid,
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (lobby_id, player_id)
      )`);
    await queryRunner.query(`ALTER TABLE matches ADD COLUMN rated boolean NOT NULL DEFAULT true`);
    await queryRunner.query(`
      ALTER TABLE queue_tickets
        ADD COLUMN origin text NOT NULL DEFAULT 'queue' CHECK (origin IN ('queue', 'lobby'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets DROP COLUMN origin`);
    await queryRunner.query(`ALTER TABLE matches DROP COLUMN rated`);
    await queryRunner.query(`DROP TABLE lobby_members`);
    await queryRunner.query(`DROP TABLE lobbies`);
  }
}
