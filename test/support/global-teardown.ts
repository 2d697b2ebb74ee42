import './register-paths';
import { withAdminClient } from './database';

/** Drops this run's template database (test databases drop themselves). */
export default async function globalTeardown(): Promise<void> {
  const template = process.env.MATCHPLANE_TEST_TEMPLATE;
  if (!template || process.env.MATCHPLANE_TEST_TEMPLATE_DROPPED === '1') return;
  await withAdminClient((client) =>
    client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`),
  );
  process.env.MATCHPLANE_TEST_TEMPLATE_DROPPED = '1';
}
