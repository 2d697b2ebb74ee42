import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The region a match's game server was actually allocated in (issue 14): on the allocation
 * (`allocations.region`, what the assignment serves) and on the match (`matches.server_region`,
 * what its events carry from PROCESS_READY on). It differs from `matches.region` only after a
 * fallback. Nullable: rows written before this migration have no recorded region.
 */
export class AllocationRegion1764630000000 implements MigrationInterface {
  name = 'AllocationRegion1764630000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE allocations ADD COLUMN region text`);
    await queryRunner.query(`ALTER TABLE matches ADD COLUMN server_region text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE matches DROP COLUMN server_region`);
    await queryRunner.query(`ALTER TABLE allocations DROP COLUMN region`);
  }
}
