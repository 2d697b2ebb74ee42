import { Client } from 'pg';
import { MigrationExecutor, type DataSource, type Migration, type QueryRunner } from 'typeorm';
import { databaseHosts, databaseTarget, type DatabaseConfig } from '@matchplane/config';
import { CodedError, type LibraryErrorCode } from '@matchplane/errors';
import {
  CONNECT_TIMEOUT_MS,
  DatabaseHostChooser,
  choosingHost,
  databaseSession,
} from './database-connection';
import { sqlStateOf } from './transaction.runner';

/**
 * Key of the session advisory lock every migration run holds: the ASCII bytes of "mpmigrat" read
 * as a signed 64-bit integer (0x6d706d6967726174). Advisory locks are per database, so runs
 * against different databases do not wait for each other.
 */
/** What creating the database needs: the connection, and the database to connect to meanwhile. */
export type AdminDatabaseConfig = DatabaseConfig & { readonly DATABASE_ADMIN_NAME: string };

export const MIGRATION_LOCK_KEY = '7885923247000281460';

/** What failed (libs/errors LibraryErrorCode). */
export type MigrationErrorCode = Extract<
  LibraryErrorCode,
  'INVALID_ROLLBACK' | 'IRREVERSIBLE' | 'MIGRATION_FAILED' | 'DATABASE_UNREACHABLE'
>;

export class MigrationError extends CodedError<MigrationErrorCode> {
  constructor(code: MigrationErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, {}, options);
    this.name = 'MigrationError';
  }
}

export interface AppliedMigration {
  name: string;
  /** Null for rows written before the migrations table had the column (e.g. by the TypeORM CLI). */
  appliedAt: Date | null;
  /** False when the database ran a migration this build does not contain (a newer build's). */
  known: boolean;
}

export interface MigrationStatus {
  /** Oldest first. */
  applied: AppliedMigration[];
  /** In the order `up()` would apply them. */
  pending: { name: string }[];
}

export type MigrationProgress =
  | { kind: 'waiting-for-lock' }
  | { kind: 'applied'; name: string; durationMs: number }
  | { kind: 'reverted'; name: string; durationMs: number };

export interface MigratorOptions {
  onProgress?: (event: MigrationProgress) => void;
}

interface MigrationRow {
  id: number;
  name: string;
  applied_at?: Date | null;
}

/**
 * Applies, reverses and reports the migrations of a DataSource (built with
 * `dataSourceOptions(config, { migrations })`). Every change runs under {@link MIGRATION_LOCK_KEY}
 * held by the same session that runs the migrations, so concurrent runs (replicas starting
 * together, an operator and a deploy job) apply each migration once, and a crash releases the
 * lock with the connection. That session is the only connection a run uses: a pool of one is
 * enough.
 */
export class Migrator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly options: MigratorOptions = {},
  ) {}

  /** Applies every pending migration, each in its own transaction; returns their names. */
  async up(): Promise<string[]> {
    return this.withLock(async (runner) => {
      await this.ensureMigrationsTable(runner);
      const executor = new MigrationExecutor(this.dataSource, runner);
      const pending = await executor.getPendingMigrations();
      const applied: string[] = [];
      for (const migration of pending) {
        const startedAt = Date.now();
        // A migration may opt out (e.g. CREATE INDEX CONCURRENTLY), as with TypeORM's own runner.
        const inTransaction = migration.instance?.transaction ?? true;
        try {
          if (inTransaction) await runner.startTransaction();
          await executor.executeMigration(migration);
          if (inTransaction) await runner.commitTransaction();
        } catch (error) {
          if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
          throw new MigrationError(
            'MIGRATION_FAILED',
            `migration ${migration.name} failed, ${
              inTransaction
                ? 'nothing of it was applied'
                : 'and it ran outside a transaction, so part of it may remain'
            }` +
              `${applied.length > 0 ? ` (applied before it: ${applied.join(', ')})` : ''}: ${messageOf(error)}`,
            { cause: error },
          );
        }
        applied.push(migration.name);
        this.options.onProgress?.({
          kind: 'applied',
          name: migration.name,
          durationMs: Date.now() - startedAt,
        });
      }
      return applied;
    });
  }

  /**
   * Reverses the `count` most recently applied migrations, newest first, each in its own
   * committed transaction; returns their names. Checks all of them before reversing any.
   */
  async rollback(count: number): Promise<string[]> {
    if (!Number.isSafeInteger(count) || count < 1) {
      throw new MigrationError(
        'INVALID_ROLLBACK',
        `rollback count must be a positive integer (got ${count})`,
      );
    }
    return this.withLock(async (runner) => {
      const applied = await this.readApplied(runner);
      if (count > applied.length) {
        throw new MigrationError(
          'INVALID_ROLLBACK',
          `cannot roll back ${count} migration(s): only ${applied.length} applied`,
        );
      }
      const byName = new Map(this.codeMigrations().map((migration) => [migration.name, migration]));
      const problems: string[] = [];
      const plan = applied.slice(0, count).map((row) => {
        const migration = byName.get(row.name);
        if (!migration) problems.push(`${row.name} is not in this build`);
        else if (typeof migration.instance?.down !== 'function')
          problems.push(`${row.name} has no down()`);
        return { name: row.name, transaction: migration?.instance?.transaction };
      });
      if (problems.length > 0) {
        throw new MigrationError(
          'IRREVERSIBLE',
          `cannot roll back ${count} migration(s), nothing was reversed: ${problems.join('; ')}`,
        );
      }

      const executor = new MigrationExecutor(this.dataSource, runner);
      const reverted: string[] = [];
      // undoLastMigration reverses the row with the highest id, the same order readApplied uses.
      for (const migration of plan) {
        const startedAt = Date.now();
        executor.transaction = migration.transaction === false ? 'none' : 'each';
        try {
          await executor.undoLastMigration();
        } catch (error) {
          throw new MigrationError(
            'MIGRATION_FAILED',
            `reverting ${migration.name} failed, it is still applied` +
              `${reverted.length > 0 ? ` (reverted before it: ${reverted.join(', ')})` : ''}: ${messageOf(error)}`,
            { cause: error },
          );
        }
        reverted.push(migration.name);
        this.options.onProgress?.({
          kind: 'reverted',
          name: migration.name,
          durationMs: Date.now() - startedAt,
        });
      }
      return reverted;
    });
  }

  /** Reads without the lock, so it answers while another run is migrating. */
  async status(): Promise<MigrationStatus> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const rows = await this.readApplied(runner);
      const pending = await new MigrationExecutor(this.dataSource, runner).getPendingMigrations();
      const known = new Set(this.codeMigrations().map((migration) => migration.name));
      return {
        applied: rows.reverse().map((row) => ({
          name: row.name,
          appliedAt: row.applied_at ?? null,
          known: known.has(row.name),
        })),
        pending: pending.map((migration) => ({ name: migration.name })),
      };
    } finally {
      await runner.release();
    }
  }

  /**
   * Creates `DATABASE_NAME` (through `DATABASE_ADMIN_NAME`) when it does not exist; returns whether
   * it did. Tries the database itself first, so a role without access to the admin database
   * can still migrate an existing one.
   */
  static async ensureDatabase(config: AdminDatabaseConfig): Promise<boolean> {
    try {
      await withClient(config, config.DATABASE_NAME, () => Promise.resolve());
      return false;
    } catch (error) {
      if (sqlStateOf(unwrapped(error)) !== '3D000') throw error;
    }
    return withClient(config, config.DATABASE_ADMIN_NAME, async (client) => {
      try {
        await client.query(`CREATE DATABASE ${quoteIdentifier(config.DATABASE_NAME)}`);
        return true;
      } catch (error) {
        // A concurrent run created it first: 42P04, or 23505 when both passed the catalog check.
        const sqlState = sqlStateOf(error);
        if (sqlState === '42P04' || sqlState === '23505') return false;
        throw error;
      }
    });
  }

  private async withLock<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const [row] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [
        MIGRATION_LOCK_KEY,
      ])) as {
        locked: boolean;
      }[];
      if (row?.locked !== true) {
        this.options.onProgress?.({ kind: 'waiting-for-lock' });
        await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      }
      try {
        return await work(runner);
      } finally {
        // If the unlock fails the session is broken, and PostgreSQL drops its locks with it.
        await runner
          .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
          .catch(() => undefined);
      }
    } finally {
      await runner.release();
    }
  }

  /**
   * TypeORM's table, created here first so that it also records when each migration ran; a table
   * TypeORM created earlier gains the column, with NULL for the rows it already holds.
   */
  private async ensureMigrationsTable(runner: QueryRunner): Promise<void> {
    const table = this.migrationsTable();
    await runner.query(
      `CREATE TABLE IF NOT EXISTS ${table} (
        id serial PRIMARY KEY,
        "timestamp" bigint NOT NULL,
        name varchar NOT NULL,
        applied_at timestamptz DEFAULT now()
      )`,
    );
    const [column] = (await runner.query(
      `SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'applied_at'`,
      [this.migrationsTableName()],
    )) as unknown[];
    if (column === undefined) {
      await runner.query(`ALTER TABLE ${table} ADD COLUMN applied_at timestamptz`);
      await runner.query(`ALTER TABLE ${table} ALTER COLUMN applied_at SET DEFAULT now()`);
    }
  }

  /** Newest first (by id, the order they were applied in). */
  private async readApplied(runner: QueryRunner): Promise<MigrationRow[]> {
    if (!(await runner.hasTable(this.migrationsTableName()))) return [];
    return (await runner.query(
      `SELECT * FROM ${this.migrationsTable()} ORDER BY id DESC`,
    )) as MigrationRow[];
  }

  /** Named as TypeORM names them: the `name` property, else the class name. */
  private codeMigrations(): Pick<Migration, 'name' | 'instance'>[] {
    return this.dataSource.migrations.map((instance) => ({
      name: instance.name ?? instance.constructor.name,
      instance,
    }));
  }

  private migrationsTableName(): string {
    return this.dataSource.options.migrationsTableName ?? 'migrations';
  }

  private migrationsTable(): string {
    return quoteIdentifier(this.migrationsTableName());
  }
}

export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

async function withClient<T>(
  config: DatabaseConfig,
  database: string,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  const settings = {
    ...databaseSession(config, 'matchplane-migrate'),
    database,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  };
  // The primary, as the apps' pools choose it: migrations write.
  const HostChoosingClient = choosingHost(Client, new DatabaseHostChooser(config, settings));
  const [first] = databaseHosts(config);
  const client = new HostChoosingClient({ ...settings, host: first?.host, port: first?.port });
  try {
    await client.connect();
  } catch (error) {
    throw new MigrationError(
      'DATABASE_UNREACHABLE',
      `cannot connect to PostgreSQL at ${databaseTarget({ ...config, DATABASE_NAME: database })}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function unwrapped(error: unknown): unknown {
  return error instanceof MigrationError && error.code === 'DATABASE_UNREACHABLE'
    ? error.cause
    : error;
}

/** One line; pg reports a refused dual-stack connect as an AggregateError with an empty message. */
export function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.replace(/\s*\n\s*/g, ' ');
}
