import { IsIn, IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { IsCertificateFile, parseHostList } from './connection-hosts';
import { EnvVar } from './env-var.decorator';
import { LoggingConfig } from './logging.config';
import { IsParsedList } from './queue-policy';
import { IsFlag, IsIntInRange, IsPort } from './validators';

/** libpq's target_session_attrs the apps can use: they write, so never a standby alone. */
export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'primary'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** libpq's sslmode values node-postgres can honour (it cannot fall back to plain text). */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

export class DatabaseConfig extends LoggingConfig {
  @EnvVar({
    description:
      "PostgreSQL as one URL, postgres://user:password@host:port[,host:port...]/database[?option=value&...], instead of the DATABASE_* variables below; its options are libpq's target_session_attrs, sslmode, sslrootcert, options and application_name (DATABASE_TARGET_SESSION_ATTRS, DATABASE_SSL_MODE, DATABASE_SSL_CA_FILE, DATABASE_OPTIONS, DATABASE_APPLICATION_NAME). A part it leaves out comes from its own variable; a variable that disagrees with it stops the app",
    secret: true,
  })
  @IsOptional()
  @IsString()
  DATABASE_URL?: string = undefined;

  @EnvVar({
    description:
      'PostgreSQL host, or several as host[:port],host[:port] (tried in order for each new connection, the first that DATABASE_TARGET_SESSION_ATTRS accepts is used)',
  })
  @IsParsedList(
    (raw) => parseHostList(raw, 5432),
    'a host or a comma-separated list of host[:port] entries, e.g. pg-1,pg-2:5433',
  )
  DATABASE_HOST = '127.0.0.1';

  @EnvVar({ description: 'PostgreSQL port (of each listed host without its own)' })
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
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
    message: 'must be a plain identifier of at most 63 characters',
  })
  DATABASE_NAME = 'matchplane';

  @EnvVar({
    description:
      "Which listed host a connection may stay on (libpq's target_session_attrs): any (the first that answers), read-write (one whose sessions accept writes: the primary) or primary (one not in recovery). With several hosts, a connection to a host that does not qualify is closed and the next host tried",
  })
  @IsIn(TARGET_SESSION_ATTRS, { message: `must be one of ${TARGET_SESSION_ATTRS.join(', ')}` })
  DATABASE_TARGET_SESSION_ATTRS: TargetSessionAttrs = 'any';

  @EnvVar({
    description:
      "TLS to PostgreSQL (libpq's sslmode): disable, require (encrypted; with DATABASE_SSL_CA_FILE also verified against that CA, as libpq does), verify-ca (the server's certificate signed by DATABASE_SSL_CA_FILE) or verify-full (also its name; the system CAs without DATABASE_SSL_CA_FILE)",
  })
  @IsIn(SSL_MODES, {
    message: `must be one of ${SSL_MODES.join(', ')} (prefer and allow would fall back to plain text, which node-postgres does not do)`,
  })
  DATABASE_SSL_MODE: SslMode = 'disable';

  @EnvVar({ description: "PEM file of the CA that signed PostgreSQL's certificate" })
  @IsOptional()
  @IsCertificateFile()
  DATABASE_SSL_CA_FILE?: string = undefined;

  @EnvVar({
    description:
      'Session settings sent with every connection (libpq\'s options), as -c name=value entries separated by spaces, e.g. "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000". A setting an app sets itself (the API\'s lock_timeout) wins',
  })
  @IsOptional()
  @Matches(/^-c\s*[A-Za-z_][A-Za-z0-9_.]*=\S+(\s+-c\s*[A-Za-z_][A-Za-z0-9_.]*=\S+)*$/, {
    message: 'must be -c name=value entries separated by spaces',
  })
  DATABASE_OPTIONS?: string = undefined;

  @EnvVar({
    description:
      "application_name of every connection, in pg_stat_activity and PostgreSQL's logs (unset: each app's own, e.g. matchplane-migrate)",
  })
  @IsOptional()
  @Matches(/^[\x20-\x7e]{1,63}$/, { message: 'must be 1-63 printable ASCII characters' })
  DATABASE_APPLICATION_NAME?: string = undefined;

  @EnvVar({ description: "Connections in this process's pool" })
  @IsIntInRange(1, 200)
  DATABASE_POOL_SIZE = 10;

  @EnvVar({
    description:
      "How long a connection of this process's pool may sit unused before it is closed (ms). Closing and reopening connections as the load moves costs PostgreSQL a backend's exit and start each time (many at once after a burst: a stall of every other request), and the new connection its statements' preparation",
  })
  @IsIntInRange(1_000, 86_400_000)
  DATABASE_POOL_IDLE_TIMEOUT_MS = 300_000;

  @EnvVar({
    description:
      'Run parametrized statements as named prepared statements, parsed once per connection and planned anew for the values of each execution (true or false). Set false behind a pooler in transaction mode that does not track prepared statements',
  })
  @IsFlag()
  DATABASE_PREPARED_STATEMENTS = true;

  @EnvVar({
    description:
      "Send a transaction's START TRANSACTION in one write with its first statement, and its last write (an idempotency answer) with its COMMIT, instead of waiting for each answer: up to two round trips fewer per transaction (true or false)",
  })
  @IsFlag()
  DATABASE_PIPELINING = true;
}
