import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A ticket may be listed by more than one match: when a match fails before ASSIGNMENT_READY for a
 * reason no player caused, MatchLifecycle requeues its tickets (same ticket, same enqueue time)
 * and the matcher matches them again, while the failed match keeps its roster as history. The
 * initial UNIQUE (ticket_id) made every such rematch fail. Which match a ticket belongs to is the
 * ticket's own `match_id`, written with the roster in the matcher's transaction under the ticket's
 * row lock and revision check; a plain index keeps the retention guard's lookups by ticket fast.
 */
export class ParticipantTicketHistory1764350000000 implements MigrationInterface {
  name = 'ParticipantTicketHistory1764350000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX match_participants_ticket_id_idx ON match_participants (ticket_id)`,
    );
    await queryRunner.query(
      `ALTER TABLE match_participants DROP CONSTRAINT match_participants_ticket_id_key`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const [row] = (await queryRunner.query(
      `SELECT count(*)::int AS tickets FROM (
         SELECT ticket_id FROM match_participants GROUP BY ticket_id HAVING count(*) > 1) AS rematched`,
    )) as { tickets: number }[];
    if ((row?.tickets ?? 0) > 0) {
      throw new Error(
        `cannot restore UNIQUE (match_participants.ticket_id): ${row?.tickets} tickets were matched more than once (requeued after a failed match); delete those failed matches first`,
      );
    }
    await queryRunner.query(
      `ALTER TABLE match_participants ADD CONSTRAINT match_participants_ticket_id_key UNIQUE (ticket_id)`,
    );
    await queryRunner.query(`DROP INDEX match_participants_ticket_id_idx`);
  }
}
