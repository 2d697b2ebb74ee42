import { Matches } from 'class-validator';
import { DatabaseConfig, EnvVar } from '@matchplane/config';

export class MigrateConfig extends DatabaseConfig {
  @EnvVar({ description: 'Database used to create DATABASE_NAME when it is missing' })
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
    message: 'must be a plain identifier of at most 63 characters',
  })
  DATABASE_ADMIN_NAME = 'postgres';
}
