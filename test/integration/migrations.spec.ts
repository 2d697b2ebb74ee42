import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { MigrationError, Migrator, dataSourceOptions } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MIGRATIONS_TABLE = 'schema_migrations';

/**
 * Everything the migrations define in schema public, as data: relations, columns, indexes,
 * constraints, triggers, functions and types, each in a deterministic order.
 */
async function catalogSnapshot(dataSource: DataSource): Promise<Record<string, unknown[]>> {
  const queries: Record<string, string> = {
    relations: `
      SELECT c.relname AS name, c.relkind AS kind, c.relpersistence AS persistence
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public'
       ORDER BY c.relname`,
    columns: `
      SELECT c.relname AS table, a.attnum AS position, a.attname AS name,
             format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
             pg_get_expr(d.adbin, d.adrelid) AS default, a.attidentity AS identity, a.attgenerated AS generated
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY c.relname, a.attnum`,
    indexes: `
      SELECT tablename AS table, indexname AS name, indexdef AS definition
        FROM pg_indexes WHERE schemaname = 'public'
       ORDER BY tablename, indexname`,
    constraints: `
      SELECT c.relname AS table, con.conname AS name, con.contype AS kind,
             pg_get_constraintdef(con.oid) AS definition, con.condeferrable AS deferrable
        FROM pg_constraint con
        JOIN pg_namespace n ON n.oid = con.connamespace
        LEFT JOIN pg_class c ON c.oid = con.conrelid
       WHERE n.nspname = 'public'
       ORDER BY c.relname, con.conname`,
    triggers: `
      SELECT c.relname AS table, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND NOT t.tgisinternal
       ORDER BY c.relname, t.tgname`,
    functions: `
      SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments, p.prokind AS kind,
             md5(p.prosrc) AS body
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public'
       ORDER BY p.proname, 2`,
    types: `
      SELECT t.typname AS name, t.typtype AS kind
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = 'public'
       ORDER BY t.typname`,
    extensions: `SELECT extname AS name FROM pg_extension ORDER BY extname`,
  };
  const snapshot: Record<string, unknown[]> = {};
  for (const [part, sql] of Object.entries(queries))
    snapshot[part] = await dataSource.query<unknown[]>(sql);
  return snapshot;
}

async function appliedNames(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<{ name: string }[]>(
    `SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`,
  );
  return rows.map((row) => row.name);
}

function migrationName(migration: (typeof allMigrations)[number]): string {
  return new migration().name;
}

/** Applied after every real migration (its timestamp is later), and cannot be reversed. */
class FakeWithoutDown9000000000001 {
  name = 'FakeWithoutDown9000000000001';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE fake_without_down (id int)');
  }
}

class FakeWithDown9000000000002 implements MigrationInterface {
  name = 'FakeWithDown9000000000002';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE fake_with_down (id int)');
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE fake_with_down');
  }
}

async function expectMigrationError(
  work: Promise<unknown>,
  code: MigrationError['code'],
  message: RegExp,
): Promise<void> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MigrationError);
  expect(error).toMatchObject({ code });
  expect((error as MigrationError).message).toMatch(message);
}

describe(Migrator.name, () => {
  describe('round trip', () => {
    let db: TestDatabase;

    beforeAll(async () => {
      db = await createTestDatabase({ migrated: false });
    });

    afterAll(() => db.drop());

    it('rolls every migration back to an empty schema and re-applies them to the identical catalog', async () => {
      const dataSource = await db.dataSource();
      const migrator = new Migrator(dataSource);
      const names = allMigrations.map(migrationName);

      expect(await migrator.status()).toEqual({
        applied: [],
        pending: names.map((name) => ({ name })),
      });
      expect(await migrator.up()).toEqual(names);
      const applied = await catalogSnapshot(dataSource);
      expect(applied.relations!.length).toBeGreaterThan(names.length);

      expect(await migrator.rollback(allMigrations.length)).toEqual([...names].reverse());
      const rolledBack = await catalogSnapshot(dataSource);
      const leftovers = (rolledBack.relations as { name: string }[])
        .map((relation) => relation.name)
        .filter((name) => !name.startsWith(`${MIGRATIONS_TABLE}_`) && name !== MIGRATIONS_TABLE);
      expect(leftovers).toEqual([]);
      expect(rolledBack.functions).toEqual([]);
      expect(rolledBack.triggers).toEqual([]);
      expect((rolledBack.types as { name: string }[]).map((type) => type.name)).toEqual([
        `_${MIGRATIONS_TABLE}`,
        MIGRATIONS_TABLE,
      ]);
      expect(rolledBack.extensions).toEqual(applied.extensions);
      expect(await appliedNames(dataSource)).toEqual([]);

      expect(await migrator.up()).toEqual(names);
      expect(await catalogSnapshot(dataSource)).toEqual(applied);
      expect(await migrator.status()).toEqual({
        applied: names.map((name) => ({ name, appliedAt: expect.any(Date) as Date, known: true })),
        pending: [],
      });
    });
  });

  describe('rollback validation', () => {
    let db: TestDatabase;
    let dataSource: DataSource;
    let migrator: Migrator;
    let appliedCatalog: Record<string, unknown[]>;

    beforeAll(async () => {
      db = await createTestDatabase({ migrated: false });
      dataSource = await db.dataSource();
      migrator = new Migrator(dataSource);
      await migrator.up();
      appliedCatalog = await catalogSnapshot(dataSource);
    });

    afterAll(() => db.drop());

    async function expectNothingReversed(): Promise<void> {
      expect(await appliedNames(dataSource)).toEqual(allMigrations.map(migrationName));
      expect(await catalogSnapshot(dataSource)).toEqual(appliedCatalog);
    }

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
      'refuses a count of %p',
      async (count) => {
        await expectMigrationError(
          migrator.rollback(count),
          'INVALID_ROLLBACK',
          /positive integer/,
        );
        await expectNothingReversed();
      },
    );

    it('refuses to roll back more migrations than are applied', async () => {
      await expectMigrationError(
        migrator.rollback(allMigrations.length + 1),
        'INVALID_ROLLBACK',
        new RegExp(`only ${allMigrations.length} applied`),
      );
      await expectNothingReversed();
    });

    describe('with migrations that cannot be reversed', () => {
      let withFakes: DataSource;
      let fakeMigrator: Migrator;

      beforeAll(async () => {
        withFakes = new DataSource(
          dataSourceOptions(db.config, {
            migrations: [...allMigrations, FakeWithoutDown9000000000001, FakeWithDown9000000000002],
          }),
        );
        await withFakes.initialize();
        fakeMigrator = new Migrator(withFakes);
        expect(await fakeMigrator.up()).toEqual([
          'FakeWithoutDown9000000000001',
          'FakeWithDown9000000000002',
        ]);
      });

      afterAll(() => withFakes.destroy());

      async function expectFakesStillApplied(): Promise<void> {
        expect((await appliedNames(dataSource)).slice(-2)).toEqual([
          'FakeWithoutDown9000000000001',
          'FakeWithDown9000000000002',
        ]);
        const [tables] = await dataSource.query<{ count: number }[]>(
          `SELECT count(*)::int AS count FROM pg_tables WHERE tablename IN ('fake_without_down', 'fake_with_down')`,
        );
        expect(tables!.count).toBe(2);
      }

      it('checks every migration of the rollback before reversing the reversible newer one', async () => {
        await expectMigrationError(
          fakeMigrator.rollback(2),
          'IRREVERSIBLE',
          /nothing was reversed: FakeWithoutDown9000000000001 has no down\(\)/,
        );
        await expectFakesStillApplied();
      });

      it('refuses to reverse a migration this build does not contain', async () => {
        await expectMigrationError(
          migrator.rollback(1),
          'IRREVERSIBLE',
          /FakeWithDown9000000000002 is not in this build/,
        );
        await expectFakesStillApplied();
        const status = await migrator.status();
        expect(status.applied.slice(-1)).toEqual([
          { name: 'FakeWithDown9000000000002', appliedAt: expect.any(Date) as Date, known: false },
        ]);
      });

      it('reverses the newest migration when it has a down(), then stops at the one without', async () => {
        expect(await fakeMigrator.rollback(1)).toEqual(['FakeWithDown9000000000002']);
        await expectMigrationError(
          fakeMigrator.rollback(1),
          'IRREVERSIBLE',
          /FakeWithoutDown9000000000001 has no down\(\)/,
        );
        expect((await appliedNames(dataSource)).slice(-1)).toEqual([
          'FakeWithoutDown9000000000001',
        ]);
      });
    });
  });

  describe('a failing migration', () => {
    class FailsHalfway9000000000003 implements MigrationInterface {
      name = 'FailsHalfway9000000000003';
      async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query('CREATE TABLE half_done (id int)');
        await queryRunner.query('SELECT no_such_function()');
      }
      async down(): Promise<void> {}
    }

    it('leaves nothing of itself behind and names what was applied before it', async () => {
      const db = await createTestDatabase({ migrated: false });
      const failing = new DataSource(
        dataSourceOptions(db.config, { migrations: [...allMigrations, FailsHalfway9000000000003] }),
      );
      try {
        await failing.initialize();
        await expectMigrationError(
          new Migrator(failing).up(),
          'MIGRATION_FAILED',
          /FailsHalfway9000000000003 failed, nothing of it was applied \(applied before it: .*\): function no_such_function\(\) does not exist/,
        );
        expect(await appliedNames(failing)).toEqual(allMigrations.map(migrationName));
        expect(await failing.query(`SELECT to_regclass('half_done') AS found`)).toEqual([
          { found: null },
        ]);
      } finally {
        if (failing.isInitialized) await failing.destroy();
        await db.drop();
      }
    });
  });
});
