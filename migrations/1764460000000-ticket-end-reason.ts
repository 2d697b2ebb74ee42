import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why a ticket ended (PLAYER_CANCELLED, HEARTBEAT_TIMEOUT, NO_SHOW, MATCH_FAILED, ...), written by
 * the transition that ended it, so GET /v1/queue/tickets/{id} can say so for as long as the
 * ticket is kept (its event may be purged from the outbox earlier). Null while live, and for a
 * ticket that completed.
 */
export class TicketEndReason1764460000000 implements MigrationInterface {
  name = 'TicketEndReason1764460000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets ADD COLUMN end_reason text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE queue_tickets DROP COLUMN end_reason`);
  }
}
