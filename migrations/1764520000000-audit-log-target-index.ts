import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator console shows one dead letter's audit trail (target_type 'outbox', its id), newest
 * first: without this index every detail page would scan the whole, ever-growing audit_log.
 */
export class AuditLogTargetIndex1764520000000 implements MigrationInterface {
  name = 'AuditLogTargetIndex1764520000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX audit_log_target_idx ON audit_log (target_type, target_id, id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX audit_log_target_idx`);
  }
}
