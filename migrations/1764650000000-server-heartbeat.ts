import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Server liveness (issue 30). `allocations.last_heartbeat_at` (libs/allocation): when the game
 * server of a live allocation last heartbeated (`POST /v1/servers/{id}/heartbeat`); NULL until its
 * first heartbeat, so a server that registered but never heartbeated is counted silent from
 * `registered_at`. Not indexed on purpose: a heartbeat stays a HOT update, and the sweep reads
 * only the few live matches' rows. `players.requeue_queued_since`/`requeue_priority_until`
 * (libs/players): the enqueue time a player whose match was lost with its server keeps for its
 * next ticket, and until when that priority holds.
 */
export class ServerHeartbeat1764650000000 implements MigrationInterface {
  name = 'ServerHeartbeat1764650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE allocations ADD COLUMN last_heartbeat_at timestamptz`);
    await queryRunner.query(`
      ALTER TABLE players
        ADD COLUMN requeue_queued_since timestamptz,
        ADD COLUMN requeue_priority_until timestamptz,
        ADD CONSTRAINT players_requeue_priority_complete
          CHECK ((requeue_queued_since IS NULL) = (requeue_priority_until IS NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE players
        DROP CONSTRAINT players_requeue_priority_complete,
        DROP COLUMN requeue_priority_until,
        DROP COLUMN requeue_queued_since`);
    await queryRunner.query(`ALTER TABLE allocations DROP COLUMN last_heartbeat_at`);
  }
}
