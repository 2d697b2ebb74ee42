import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rule sets as versioned data (issue 34, item 3): each version the rule variables it sets over
 * each app's environment (version 1, seeded by the first app to start, sets none), at most one
 * active. Owned by libs/rule-sets. Each match records the version that formed it (NULL for a
 * lobby's match, which no rules formed, and for matches formed before this migration).
 */
export class RuleSets1764745000000 implements MigrationInterface {
  name = 'RuleSets1764745000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE rule_sets (
        version integer PRIMARY KEY CONSTRAINT rule_sets_version_positive CHECK (version > 0),
        body jsonb NOT NULL CONSTRAINT rule_sets_body_object CHECK (jsonb_typeof(body) = 'object'),
        status text NOT NULL CONSTRAINT rule_sets_status_valid
          CHECK (status IN ('draft', 'active', 'retired')),
        reason text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        activated_at timestamptz,
        retired_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX rule_sets_one_active ON rule_sets (status) WHERE status = 'active'`,
    );
    await queryRunner.query(`ALTER TABLE matches ADD COLUMN rule_set_version integer`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE matches DROP COLUMN rule_set_version`);
    await queryRunner.query(`DROP TABLE rule_sets`);
  }
}
