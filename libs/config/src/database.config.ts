import { IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { EnvVar } from './env-var.decorator';
import { LoggingConfig } from './logging.config';
import { IsFlag, IsIntInRange, IsPort } from './validators';

export class DatabaseConfig extends LoggingConfig {
  @EnvVar({
    description:
      'PostgreSQL as one URL, postgres://user:password@host:port/database, instead of the DATABASE_* variables below. A part it leaves out comes from its own variable; a variable that disagrees with it stops the app',
    secret: true,
  })
  @IsOptional()
  @IsString()
  DATABASE_URL?: string = undefined;

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
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
    message: 'must be a plain identifier of at most 63 characters',
  })
  DATABASE_NAME = 'matchplane';

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
