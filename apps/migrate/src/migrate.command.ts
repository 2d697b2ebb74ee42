import { CliExitCode, exitCodeOf } from '@matchplane/errors';
import { DataSource } from 'typeorm';
import type { MigrateConfig } from './migrate.config';
import {
  MigrationError,
  Migrator,
  dataSourceOptions,
  messageOf,
  sleep,
  sqlStateOf,
  type MigrationProgress,
  type MigrationStatus,
} from '@matchplane/persistence';
import { databaseTarget } from '@matchplane/config';
import { allMigrations } from '@matchplane/migrations';
import type { MigrateCommand } from './migrate-args.parser';

export interface CommandOutput {
  line(text: string): void;
  error(text: string): void;
}

/** A one-shot job reports an unreachable database promptly; the scheduler that ran it retries. */
const CONNECT_ATTEMPTS = 3;
const CONNECT_RETRY_DELAY_MS = 300;

/** Runs one migrate command to completion; resolves with the exit code (libs/errors CLI_EXIT_CODES). */
export async function runMigrateCommand(
  command: Exclude<MigrateCommand, { kind: 'help' }>,
  config: MigrateConfig,
  output: CommandOutput,
): Promise<number> {
  const target = databaseTarget(config);
  const dataSource = new DataSource(
    dataSourceOptions(config, { migrations: allMigrations, applicationName: 'matchplane-migrate' }),
  );
  try {
    if (
      command.kind === 'apply' &&
      (await withConnectRetries(() => Migrator.ensureDatabase(config)))
    ) {
      output.line(`created database ${config.DATABASE_NAME}`);
    }
    await withConnectRetries(async () => {
      try {
        await dataSource.initialize();
      } catch (error) {
        throw new MigrationError(
          'DATABASE_UNREACHABLE',
          `cannot connect to PostgreSQL at ${target}: ${messageOf(error)}`,
          {
            cause: error,
          },
        );
      }
    });
    const migrator = new Migrator(dataSource, {
      onProgress: (event) => output.line(describeProgress(event)),
    });
    switch (command.kind) {
      case 'apply': {
        const applied = await migrator.up();
        output.line(
          applied.length === 0
            ? `nothing to apply; ${target} is up to date`
            : `applied ${plural(applied.length, 'migration')}; ${target} is up to date`,
        );
        break;
      }
      case 'rollback': {
        const reverted = await migrator.rollback(command.count);
        output.line(`reverted ${plural(reverted.length, 'migration')} on ${target}`);
        break;
      }
      case 'status':
        for (const line of describeStatus(await migrator.status(), target)) output.line(line);
        break;
    }
    return CliExitCode.OK;
  } catch (error) {
    output.error(
      error instanceof MigrationError ? error.message : `failed on ${target}: ${messageOf(error)}`,
    );
    return exitCodeOf(error);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

async function withConnectRetries<T>(connect: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await connect();
    } catch (error) {
      if (attempt >= CONNECT_ATTEMPTS || !isTransientConnectFailure(error)) throw error;
      await sleep(CONNECT_RETRY_DELAY_MS * attempt);
    }
  }
}

/** Network failures carry no SQLSTATE; 57P03 is a server still starting. Anything else will not heal. */
function isTransientConnectFailure(error: unknown): boolean {
  if (!(error instanceof MigrationError) || error.code !== 'DATABASE_UNREACHABLE') return false;
  const sqlState = sqlStateOf(error.cause);
  return sqlState === undefined || sqlState === '57P03';
}

function describeProgress(event: MigrationProgress): string {
  switch (event.kind) {
    case 'waiting-for-lock':
      return 'another migration run holds the migration lock; waiting for it to finish';
    case 'applied':
      return `applied ${event.name} (${event.durationMs} ms)`;
    case 'reverted':
      return `reverted ${event.name} (${event.durationMs} ms)`;
  }
}

function describeStatus(status: MigrationStatus, target: string): string[] {
  const width = Math.max(
    0,
    ...[...status.applied, ...status.pending].map((migration) => migration.name.length),
  );
  return [
    `${target}: ${status.applied.length} applied, ${status.pending.length} pending`,
    ...status.applied.map(
      (migration) =>
        `  applied  ${migration.name.padEnd(width)}  ${migration.appliedAt?.toISOString() ?? 'time unknown'}` +
        `${migration.known ? '' : '  (not in this build)'}`,
    ),
    ...status.pending.map((migration) => `  pending  ${migration.name}`),
  ];
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
