import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Avoid lists (issue 34): a player's avoided players live beside its blocks in `player_blocks`
 * (libs/players), told apart by `kind`. One row per ordered pair, so a player is blocked or
 * avoided, not both, and the matcher reads both lists in its one statement per pass.
 */
export class PlayerAvoids1764755000000 implements MigrationInterface {
  name = 'PlayerAvoids1764755000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE player_blocks
        ADD COLUMN kind text NOT NULL DEFAULT 'block',
        ADD CONSTRAINT player_blocks_kind CHECK (kind IN ('block', 'avoid'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Without the column an avoid would read as a block: the avoid lists go with it.
    await queryRunner.query(`DELETE FROM player_blocks WHERE kind = 'avoid'`);
    await queryRunner.query(`ALTER TABLE player_blocks DROP COLUMN kind`);
  }
}
