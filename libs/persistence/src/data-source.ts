import {
  type DataSource,
  type DataSourceOptions,
  type MixedList,
  type EntitySchema,
} from 'typeorm';
import type { TlsOptions } from 'node:tls';
import { Client } from 'pg';
import type { DatabaseConfig } from '@matchplane/config';
import { sleep, backoffDelayMs } from './backoff';
import {
  CONNECT_TIMEOUT_MS,
  DatabaseHostChooser,
  choosingHost,
  databaseSession,
} from './database-connection';
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
  // A session setting, so it costs no round trip per transaction.
  const lockTimeout =
    extras.lockTimeoutMs === undefined
      ? undefined
      : `-c lock_timeout=${Math.round(extras.lockTimeoutMs)}`;
  const session = databaseSession(config, extras.applicationName ?? 'matchplane', lockTimeout);
  const chooser = new DatabaseHostChooser(config, {
    ...session,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  const [first] = chooser.hosts;
  const base =
    config.DATABASE_PREPARED_STATEMENTS || config.DATABASE_PIPELINING
      ? poolClient({
          preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
          pipelining: config.DATABASE_PIPELINING,
        })
      : Client;
  const client = choosingHost(base, chooser);
  return {
    type: 'postgres',
    // The first listed host; with several, the pool's Client class picks one per connection.
    host: first?.host,
    port: first?.port,
    username: session.user,
    password: session.password,
    database: session.database,
    // node-postgres takes tls.connect's options (TypeORM's type names the server-side TlsOptions).
    ssl: session.ssl as TlsOptions | false,
    entities: extras.entities ?? [],
    migrations: extras.migrations ?? [],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    // Off: a failed query's log line would carry its parameters (token hashes, payloads); callers log errors.
    logging: false,
    applicationName: session.application_name,
    extra: {
      max: config.DATABASE_POOL_SIZE,
      idleTimeoutMillis: config.DATABASE_POOL_IDLE_TIMEOUT_MS,
      // Each listed host may take its connect timeout while the list is walked, then the connection.
      connectionTimeoutMillis:
        CONNECT_TIMEOUT_MS * (chooser.hosts.length > 1 ? chooser.hosts.length + 1 : 1),
      ...(client === Client ? {} : { Client: client }),
      ...(session.options === undefined ? {} : { options: session.options }),
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
  target = describeTarget(dataSource),
): Promise<DataSource> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await dataSource.initialize();
    } catch (error) {
      if (attempt >= maxAttempts) throw error;
      const delay = backoffDelayMs(attempt, { baseMs: 250, capMs: 10_000 });
      logger.warn(
        `PostgreSQL at ${target} is unreachable (${describe(error)}); retry ${attempt} in ${delay} ms`,
      );
      await sleep(delay);
    }
  }
}

function describeTarget(dataSource: DataSource): string {
  const { host, port, database } = dataSource.options as {
    host?: string;
    port?: number;
    database?: string;
  };
  return `${host}:${port}/${database}`;
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  return error instanceof Error ? error.message || error.name : String(error);
}
