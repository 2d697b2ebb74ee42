import { IsIn, IsNotEmpty, IsOptional, IsString, IsUrl, Matches } from 'class-validator';
import { IsIntInRange, IsPort } from './validators';
import { EnvVar } from './env-var.decorator';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every app logs; nothing else is common to all of them. */
export class LoggingConfig {
  @EnvVar({ description: 'Minimum log level' })
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @EnvVar({ description: 'Log format: json (one object per line) or pretty (for humans)' })
  @IsIn(['json', 'pretty'])
  LOG_FORMAT: 'json' | 'pretty' = 'json';
}

export class DatabaseConfig extends LoggingConfig {
  @EnvVar({ description: 'PostgreSQL host' })
  @IsString()
  @IsNotEmpty()
  DATABASE_HOST = '127.0.0.1';

  @EnvVar({ description: 'PostgreSQL port' })
  @IsPort()
  DATABASE_PORT = 5432;

  @EnvVar({ description: 'PostgreSQL user' })
  @IsString()
  @IsNotEmpty()
  DATABASE_USER = 'postgres';

  @EnvVar({ description: 'PostgreSQL password (empty for trust auth)', secret: true })
  @IsOptional()
  @IsString()
  DATABASE_PASSWORD?: string = undefined;

  @EnvVar({ description: 'PostgreSQL database name' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a plain identifier of at most 63 characters' })
  DATABASE_NAME = 'matchplane';

  @EnvVar({ description: 'Connections in this process\'s pool' })
  @IsIntInRange(1, 200)
  DATABASE_POOL_SIZE = 10;
}

export class ServiceConfig extends DatabaseConfig {
  @EnvVar({ description: 'Redis host' })
  @IsString()
  @IsNotEmpty()
  REDIS_HOST = '127.0.0.1';

  @EnvVar({ description: 'Redis port' })
  @IsPort()
  REDIS_PORT = 6379;

  @EnvVar({ description: 'Redis password', secret: true })
  @IsOptional()
  @IsString()
  REDIS_PASSWORD?: string = undefined;

  @EnvVar({ description: 'Prefix of every Redis key and BullMQ queue (isolates deployments and tests)' })
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, "_" or "-"' })
  REDIS_KEY_PREFIX = 'mp';
}

/** Shared by the worker apps: they serve only health and metrics over HTTP. */
export abstract class WorkerConfig extends ServiceConfig {
  @EnvVar({ description: 'Address the health/metrics listener binds' })
  @IsString()
  @IsNotEmpty()
  HEALTH_HOST = '0.0.0.0';

  abstract HEALTH_PORT: number;
}

function healthPort(): PropertyDecorator {
  return (target, key) => {
    EnvVar({ description: 'Port of the health/metrics listener (GET /health, GET /metrics)' })(target, key);
    IsPort()(target, key);
  };
}

export class ApiConfig extends ServiceConfig {
  @EnvVar({ description: 'Address the API binds' })
  @IsString()
  @IsNotEmpty()
  API_HOST = '0.0.0.0';

  @EnvVar({ description: 'Port of the HTTP and WebSocket API (also serves /health and /metrics)' })
  @IsPort()
  API_PORT = 3000;

  @EnvVar({
    description:
      'Operator credentials for /v1/admin: comma-separated name=token pairs, each token at least 32 characters. Unset: admin routes answer 503',
    secret: true,
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.@-]+=[^,=\s]{32,}(,[A-Za-z0-9_.@-]+=[^,=\s]{32,})*$/, {
    message: 'must be comma-separated name=token pairs with tokens of at least 32 characters',
  })
  OPERATOR_TOKENS?: string = undefined;
}

export class DispatcherConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9101;

  @EnvVar({ description: 'Relay polling backstop: how often it looks for due rows without a wake-up (ms)' })
  @IsIntInRange(10, 60_000)
  OUTBOX_POLL_INTERVAL_MS = 250;

  @EnvVar({ description: 'Aggregate heads the relay claims per query' })
  @IsIntInRange(1, 10_000)
  OUTBOX_CLAIM_BATCH = 500;

  @EnvVar({ description: 'A claim older than this is presumed abandoned and may be claimed again (ms)' })
  @IsIntInRange(1_000, 3_600_000)
  OUTBOX_CLAIM_LEASE_MS = 60_000;

  @EnvVar({ description: 'Failed deliveries of one row before it is dead-lettered' })
  @IsIntInRange(1, 1_000)
  MAX_OUTBOX_DELIVERY_ATTEMPTS = 10;

  @EnvVar({ description: 'First retry delay ceiling after a failed delivery; doubles per attempt (ms)' })
  @IsIntInRange(0, 3_600_000)
  OUTBOX_RETRY_BASE_MS = 500;

  @EnvVar({ description: 'Largest retry delay after a failed delivery (ms)' })
  @IsIntInRange(0, 86_400_000)
  OUTBOX_RETRY_CAP_MS = 60_000;

  @EnvVar({ description: 'Deliveries one dispatcher process runs at once (one per aggregate)' })
  @IsIntInRange(1, 1_000)
  DISPATCHER_CONCURRENCY = 64;

  @EnvVar({ description: 'How often the auditor looks for claimed rows whose job vanished from Redis (ms)' })
  @IsIntInRange(100, 3_600_000)
  OUTBOX_AUDIT_INTERVAL_MS = 5_000;

  @EnvVar({ description: 'A claim must be at least this old before the auditor checks its job (ms)' })
  @IsIntInRange(0, 3_600_000)
  OUTBOX_AUDIT_MIN_AGE_MS = 2_000;
}

export class MatcherConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9102;
}

export class AllocatorConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9103;
}

export class MaintenanceConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9104;
}

/**
 * The reference game server holds no database or Redis credentials: in production it runs in a
 * game-server fleet and talks only to the API with its own workload credential.
 */
export class GameServerConfig extends LoggingConfig {
  @EnvVar({ description: 'Base URL of the Matchplane API' })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  MATCHPLANE_API_URL = 'http://127.0.0.1:3000';

  @EnvVar({ description: 'Address the game server and its health listener bind' })
  @IsString()
  @IsNotEmpty()
  HEALTH_HOST = '0.0.0.0';

  @healthPort()
  HEALTH_PORT = 9105;
}

export class MigrateConfig extends DatabaseConfig {
  @EnvVar({ description: 'Database used to create DATABASE_NAME when it is missing' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a plain identifier of at most 63 characters' })
  DATABASE_ADMIN_NAME = 'postgres';
}
