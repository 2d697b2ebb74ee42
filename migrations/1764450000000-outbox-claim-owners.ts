import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fenced claims with owners. A claim now carries a token (fresh per claiming statement) and the
 * dispatcher process that holds it; the ack and the failure accounting name the token they were
 * made under and are refused for a stale one. `outbox_dispatchers` is each process's liveness
 * (a heartbeat every ~500 ms): a claim whose owner stopped beating is taken over in seconds, and
 * `claimed_at` plus OUTBOX_CLAIM_LEASE_MS remains the last-resort backstop.
 *
 * Claims in flight when this runs were made by the previous dispatcher, which has no token: they
 * are cleared, so the new dispatchers claim those rows again at once (a redelivery, which
 * at-least-once delivery allows). Stop the previous dispatchers before migrating: their claims
 * would now fail the check below.
 */
export class OutboxClaimOwners1764450000000 implements MigrationInterface {
  name = 'OutboxClaimOwners1764450000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox_dispatchers (
        id uuid PRIMARY KEY,
        -- host:pid, for the operator reading this table; nothing selects on it.
        label text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`UPDATE outbox SET claimed_at = NULL WHERE claimed_at IS NOT NULL`);
    // No foreign key to outbox_dispatchers: a dead owner's row is deleted while its claims stay
    // until they are taken over, and a missing owner reads as a dead one.
    await queryRunner.query(`
      ALTER TABLE outbox
        ADD COLUMN claim_token uuid,
        ADD COLUMN claimed_by uuid,
        ADD CONSTRAINT outbox_claim_complete
          CHECK ((claim_token IS NULL) = (claimed_at IS NULL) AND (claim_token IS NULL) = (claimed_by IS NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The claims keep claimed_at, which the previous dispatcher's lease understands.
    await queryRunner.query(`
      ALTER TABLE outbox
        DROP CONSTRAINT outbox_claim_complete,
        DROP COLUMN claimed_by,
        DROP COLUMN claim_token`);
    await queryRunner.query(`DROP TABLE outbox_dispatchers`);
  }
}
