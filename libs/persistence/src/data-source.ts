import {
  type DataSource,
  type DataSourceOptions,
  type MixedList,
  type EntitySchema,
} from 'typeorm';
import type { DatabaseConfig } from '@matchplane/config';
import { sleep, backoffDelayMs } from './backoff';
import { poolClient } from './pool-client';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
type EntityList = MixedList<Function | string | EntitySchema>;

export interface DataSourceExtras {
  entities?: EntityList;
  migrations?: DataSourceOptions['migrations'];
  applicationName?: string;
  /** lock_timeout of every session (ms): a statement waiting longer for a lock fails with 55P03. */
  lockTimeoutMs?: number;
}

export function dataSourceOptions(
  config: DatabaseConfig,
  extras: DataSourceExtras = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    host: config.DATABASE_HOST,
    port: config.DATABASE_PORT,
    username: config.DATABASE_USER,
    password: config.DATABASE_PASSWORD,
    database: config.DATABASE_NAME,
    entities: extras.entities ?? [],
    migrations: extras.migrations ?? [],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    // Off: a failed query's log line would carry its parameters (token hashes, payloads); callers log errors.
    logging: false,
    applicationName: extras.applicationName ?? 'matchplane',
    extra: {
      max: config.DATABASE_POOL_SIZE,
      idleTimeoutMillis: config.DATABASE_POOL_IDLE_TIMEOUT_MS,
      connectionTimeoutMillis: 5_000,
      ...(config.DATABASE_PREPARED_STATEMENTS || config.DATABASE_PIPELINING
        ? {
            Client: poolClient({
              preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
              pipelining: config.DATABASE_PIPELINING,
            }),
          }
        : {}),
      // A session setting, so it costs no round trip per transaction.
      ...(extras.lockTimeoutMs !== undefined
        ? { options: `-c lock_timeout=${Math.round(extras.lockTimeoutMs)}` }
        : {}),
    },
  };
}

export interface ConnectLogger {
  warn(message: string): void;
}

/**
 * Long-running apps wait for the database instead of crash-looping: retries with capped
 * exponential backoff and one log line per attempt.
 */
export async function initializeWithBackoff(
  dataSource: DataSource,
  logger: ConnectLogger,
  maxAttempts = Number.POSITIVE_INFINITY,
): Promise<DataSource> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await dataSource.initialize();
    } catch (error) {
      if (attempt >= maxAttempts) throw error;
      const delay = backoffDelayMs(attempt, { baseMs: 250, capMs: 10_000 });
      const { host, port, database } = dataSource.options as {
        host?: string;
        port?: number;
        database?: string;
      };
      logger.warn(
        `PostgreSQL at ${host}:${port}/${database} is unreachable (${describe(error)}); retry ${attempt} in ${delay} ms`,
      );
      await sleep(delay);
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  return error instanceof Error ? error.message || error.name : String(error);
}
