import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two retention predicates the initial schema left without an index: revoked sessions (by
 * revoked_at) and the idempotency purge's guard, the oldest dead letter's created_at. Both are
 * partial, so they cost nothing on the hot paths: a session is revoked once, and only
 * dead-lettering (rare) adds a row to the outbox one.
 *
 * Built in the migration's transaction rather than CONCURRENTLY: a concurrent migrate run waits
 * for the migration lock inside a statement, holding a snapshot that CREATE INDEX CONCURRENTLY
 * would wait for (a deadlock). The cost is one scan of each table with its writes blocked.
 */
export class RetentionIndexes1764100000000 implements MigrationInterface {
  name = 'RetentionIndexes1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX sessions_revoked_at_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX outbox_dead_created_at_idx ON outbox (created_at) WHERE status = 'dead'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX outbox_dead_created_at_idx`);
    await queryRunner.query(`DROP INDEX sessions_revoked_at_idx`);
  }
}
