import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Regions (issue 31): the ids of probe measurements the API recorded. A measurement is signed by a
 * regional probe edge and handed to the API by the player; its id makes it single use (the primary
 * key refuses a replay in the recording transaction). Rows are purged by age once a measurement
 * that old is refused as expired anyway (PROBE_MEASUREMENT_MAX_AGE_MS < the retention window).
 */
export class ProbeMeasurements1764680000000 implements MigrationInterface {
  name = 'ProbeMeasurements1764680000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE probe_measurements (
        id uuid PRIMARY KEY,
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        region text NOT NULL,
        key_id text NOT NULL,
        samples_ms double precision[] NOT NULL
          CONSTRAINT probe_measurements_samples_present CHECK (cardinality(samples_ms) >= 1),
        measured_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX probe_measurements_recorded_at_idx ON probe_measurements (recorded_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE probe_measurements`);
  }
}
