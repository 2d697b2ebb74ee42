import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Backfill by role (issue 34 mode shapes): the roles a team's still-present players leave open
 * when its server asks for places, which the matcher's fill must cover. Empty: none (a mode
 * without a roles rule, or every slot held).
 */
export class BackfillOpenRoles1764735000000 implements MigrationInterface {
  name = 'BackfillOpenRoles1764735000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE backfill_requests ADD COLUMN open_roles text[] NOT NULL DEFAULT '{}'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE backfill_requests DROP COLUMN open_roles`);
  }
}
