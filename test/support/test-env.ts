import { randomBytes } from 'node:crypto';

/** Connection settings for the test services; CI and developers may override them. */
export const testServices = {
  host: process.env.DATABASE_HOST || '127.0.0.1',
  port: Number(process.env.DATABASE_PORT || 5432),
  user: process.env.DATABASE_USER || 'postgres',
  password: process.env.DATABASE_PASSWORD || undefined,
  adminDatabase: process.env.DATABASE_ADMIN_NAME || 'postgres',
  redisHost: process.env.REDIS_HOST || '127.0.0.1',
  redisPort: Number(process.env.REDIS_PORT || 6379),
};

export const TEST_DATABASE_PREFIX = 'mp_t_';
export const TEMPLATE_PREFIX = 'mp_template_';

/**
 * The migrated template of this jest run: global setup names it after the jest process and
 * exports the name to the workers, so concurrent runs on one machine never share one.
 */
export function templateDatabase(): string {
  return process.env.MATCHPLANE_TEST_TEMPLATE ?? `${TEMPLATE_PREFIX}${process.pid}`;
}

export function uniqueSuffix(): string {
  return `${process.pid}_${randomBytes(4).toString('hex')}`;
}
