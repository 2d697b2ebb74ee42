import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATES_BEFORE = `'ALLOCATING', 'PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'`;

/**
 * Ready check (issue 30): a match of a mode with an acceptance timeout starts AWAITING_ACCEPTANCE
 * until its `acceptance_deadline`; each participant's answer is kept on its roster row (owned by
 * libs/matches, ReadyCheckStore). A participant answers once: accepted or declined, never both.
 */
export class ReadyCheck1764690000000 implements MigrationInterface {
  name = 'ReadyCheck1764690000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE matches DROP CONSTRAINT matches_state_valid,
        ADD CONSTRAINT matches_state_valid CHECK (state IN ('AWAITING_ACCEPTANCE', ${STATES_BEFORE})),
        ADD COLUMN acceptance_deadline timestamptz`);
    await queryRunner.query(`
      ALTER TABLE match_participants
        ADD COLUMN accepted_at timestamptz,
        ADD COLUMN declined_at timestamptz,
        ADD CONSTRAINT match_participants_one_answer
          CHECK (accepted_at IS NULL OR declined_at IS NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // A match still waiting would break the old constraint; end it first (the ready check's own
    // timeout does it through the state machine), rather than rewrite its state here.
    const [waiting] = (await queryRunner.query(
      `SELECT count(*)::text AS count FROM matches WHERE state = 'AWAITING_ACCEPTANCE'`,
    )) as { count: string }[];
    if (waiting && waiting.count !== '0') {
      throw new Error(
        `${waiting.count} match(es) still AWAITING_ACCEPTANCE: let their ready checks end before reverting`,
      );
    }
    await queryRunner.query(`
      ALTER TABLE match_participants
        DROP CONSTRAINT match_participants_one_answer,
        DROP COLUMN accepted_at,
        DROP COLUMN declined_at`);
    await queryRunner.query(`
      ALTER TABLE matches DROP COLUMN acceptance_deadline,
        DROP CONSTRAINT matches_state_valid,
        ADD CONSTRAINT matches_state_valid CHECK (state IN (${STATES_BEFORE}))`);
  }
}
