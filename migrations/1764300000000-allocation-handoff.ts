import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the allocator and the game-server routes record on an allocation beyond the initial
 * schema: when the server was handed its credential (a retry re-issues one only before that),
 * what the server said at registration, and the result it reported. The credential index makes
 * the routes' credential lookup one index probe, and its uniqueness binds a credential to exactly
 * one allocation (one server id).
 */
export class AllocationHandoff1764300000000 implements MigrationInterface {
  name = 'AllocationHandoff1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE allocations
        ADD COLUMN handed_off_at timestamptz,
        ADD COLUMN registered_at timestamptz,
        ADD COLUMN server_protocol_version integer,
        ADD COLUMN server_image_digest text,
        ADD COLUMN reported_result jsonb
          CONSTRAINT allocations_reported_result_is_object CHECK (reported_result IS NULL OR jsonb_typeof(reported_result) = 'object'),
        ADD CONSTRAINT allocations_handed_off_has_credential CHECK (handed_off_at IS NULL OR credential_hash IS NOT NULL)`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX allocations_credential_hash_key ON allocations (credential_hash)
        WHERE credential_hash IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX allocations_credential_hash_key`);
    await queryRunner.query(`
      ALTER TABLE allocations
        DROP CONSTRAINT allocations_handed_off_has_credential,
        DROP COLUMN reported_result,
        DROP COLUMN server_image_digest,
        DROP COLUMN server_protocol_version,
        DROP COLUMN registered_at,
        DROP COLUMN handed_off_at`);
  }
}
