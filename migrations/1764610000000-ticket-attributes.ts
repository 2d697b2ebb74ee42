import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A ticket's attributes (QUEUE_MODE_ATTRIBUTES: build version, crossplay pool, skill, ...), as the
 * API validated them with the mode's defaults filled in; the matcher's attribute rules read them
 * through the candidate projection. Always a JSON object (`{}` for a mode without attributes and
 * for tickets created before this column), never JSON null: the CHECK keeps a nil map out.
 */
export class TicketAttributes1764610000000 implements MigrationInterface {
  name = 'TicketAttributes1764610000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A constant default: PostgreSQL 11+ adds the column without rewriting the table.
    await queryRunner.query(
      `ALTER TABLE queue_tickets
         ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}'::jsonb
         CONSTRAINT queue_tickets_attributes_object CHECK (jsonb_typeof(attributes) = 'object')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets DROP COLUMN attributes`);
  }
}
