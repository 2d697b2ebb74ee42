import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Block lists (issue 34): a player's blocked players, owned by libs/players (PlayerBlocks). The
 * matcher never puts two players in one match when either blocked the other, so it reads both
 * directions: the primary key serves "whom did these block", the index "who blocked these".
 */
export class PlayerBlocks1764720000000 implements MigrationInterface {
  name = 'PlayerBlocks1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE player_blocks (
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        blocked_player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (player_id, blocked_player_id),
        CONSTRAINT player_blocks_not_self CHECK (player_id <> blocked_player_id)
      )`);
    await queryRunner.query(`
      CREATE INDEX player_blocks_blocked_player_idx ON player_blocks (blocked_player_id, player_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE player_blocks`);
  }
}
