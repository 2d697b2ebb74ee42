import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operator holds on the queue (issue 30, live operations): a mode or a region PAUSED or
 * DRAINING, with who set it, why and how long they expect it to last. Owned by libs/tickets
 * (QueueControls); a row exists only while the hold does, so the table stays a handful of rows.
 */
export class QueueControls1764670000000 implements MigrationInterface {
  name = 'QueueControls1764670000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE queue_controls (
        scope text NOT NULL CONSTRAINT queue_controls_scope_valid CHECK (scope IN ('mode', 'region')),
        name text NOT NULL,
        state text NOT NULL CONSTRAINT queue_controls_state_valid
          CHECK (state IN ('PAUSED', 'DRAINING')),
        reason text NOT NULL,
        retry_after_seconds integer
          CONSTRAINT queue_controls_retry_after_positive CHECK (retry_after_seconds > 0),
        set_by text NOT NULL,
        set_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, name)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE queue_controls`);
  }
}
