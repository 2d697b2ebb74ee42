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

export const TEMPLATE_DATABASE = 'mp_test_template';
export const TEST_DATABASE_PREFIX = 'mp_t_';

export function uniqueSuffix(): string {
  return `${process.pid}_${randomBytes(4).toString('hex')}`;
}
