import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Owned read models (issue 32): what one module's statements may read of another's tables, as
 * views its owner creates here and lists in READ_MODELS (libs/persistence table-ownership.ts).
 * Each is a plain projection the planner inlines, so a statement reading one keeps the plan it had
 * when it named the table. Views over views follow the owners' order: tickets, matches, allocation,
 * outbox.
 */
const VIEWS: readonly string[] = [
  // libs/tickets: the tickets still bound to a match (they name it and have not ended or requeued).
  `CREATE VIEW bound_tickets AS
     SELECT t.id AS ticket_id, t.match_id
       FROM queue_tickets t
      WHERE t.state IN ('MATCHED', 'ASSIGNED', 'CONNECTED')`,
  // libs/matches: each match's participants whose ticket is still bound to it (what is signed).
  `CREATE VIEW durable_participants AS
     SELECT p.match_id, p.player_id, p.ticket_id, p.team
       FROM match_participants p
       JOIN bound_tickets b ON b.ticket_id = p.ticket_id AND b.match_id = p.match_id`,
  // libs/matches: the tickets some match still lists (a participant row refers to them).
  `CREATE VIEW listed_tickets AS
     SELECT p.ticket_id, p.match_id FROM match_participants p`,
  // libs/matches: the matches that ended, with how and when.
  `CREATE VIEW ended_matches AS
     SELECT m.id AS match_id, m.state, m.finished_at
       FROM matches m
      WHERE m.state IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
  // libs/allocation: the live allocations (a server not yet released), whether a server was
  // allocated, and since when a registered server has been silent (never before PostgreSQL's own
  // start: while the database restarted no server could be heard).
  `CREATE VIEW live_allocations AS
     SELECT a.match_id, a.state = 'ALLOCATED' AS allocated,
            CASE WHEN a.state = 'ALLOCATED' AND a.registered_at IS NOT NULL
                 THEN GREATEST(COALESCE(a.last_heartbeat_at, a.registered_at), pg_postmaster_start_time())
            END AS silent_since
       FROM allocations a
      WHERE a.state IN ('REQUESTED', 'ALLOCATED')`,
  // libs/outbox: when the oldest dead letter was written (one row; NULL when there is none).
  `CREATE VIEW oldest_dead_letter AS
     SELECT min(o.created_at) AS created_at FROM outbox o WHERE o.status = 'dead'`,
];

export class OwnedReadModels1764710000000 implements MigrationInterface {
  name = 'OwnedReadModels1764710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of VIEWS) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Dependents first: durable_participants reads bound_tickets.
    await queryRunner.query(
      `DROP VIEW oldest_dead_letter, live_allocations, ended_matches, listed_tickets, durable_participants, bound_tickets`,
    );
  }
}
