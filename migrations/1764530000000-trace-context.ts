import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * W3C trace context (the `traceparent` header value) of the work that wrote a row, so a trace
 * can follow a change across processes: the outbox row carries its writer's context to the
 * dispatcher, and a queue ticket carries its API request's to the matcher, whose match.formed
 * continues it. Nullable: written only while tracing is on, and a row without it delivers as
 * before.
 */
export class TraceContext1764530000000 implements MigrationInterface {
  name = 'TraceContext1764530000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE outbox ADD COLUMN traceparent text`);
    await queryRunner.query(`ALTER TABLE queue_tickets ADD COLUMN traceparent text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets DROP COLUMN traceparent`);
    await queryRunner.query(`ALTER TABLE outbox DROP COLUMN traceparent`);
  }
}
