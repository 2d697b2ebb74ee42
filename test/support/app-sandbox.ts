import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './database';
import { startApp, type AppName, type RunningApp } from './processes';
import { deleteRedisPrefix, testRedisPrefix } from './redis';
import { testServices } from './test-env';

export interface AppSandbox {
  /** DATABASE_* of the file's own database, the test Redis and the file's own key prefix. */
  serviceEnv(): Record<string, string>;
  /** Starts an app from dist/; it is killed after the test. */
  start(name: AppName, env: Record<string, string>): RunningApp;
}

/**
 * For a test file that runs apps as processes: registers the hooks that give it its own migrated
 * database and Redis key prefix, kill every app it started after each test, and drop both after
 * the file.
 */
export function appSandbox(): AppSandbox {
  let db: TestDatabase | undefined;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((app) => app.stop('SIGKILL')));
  });
  afterAll(async () => {
    await db?.drop();
    await deleteRedisPrefix(prefix);
  });

  return {
    serviceEnv() {
      if (!db) throw new Error('appSandbox: the database exists from beforeAll on');
      return {
        ...db.env,
        REDIS_HOST: testServices.redisHost,
        REDIS_PORT: String(testServices.redisPort),
        REDIS_KEY_PREFIX: prefix,
      };
    },
    start(name, env) {
      const app = startApp(name, env);
      running.push(app);
      return app;
    },
  };
}

/** A fresh join key set holding one random key under `keyId` (the allocator refuses to start without). */
export function writeJoinKeys(keyId: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mp-join-keys-')), 'join-keys.json');
  writeFileSync(file, JSON.stringify({ [keyId]: randomBytes(32).toString('base64') }));
  return file;
}

/** A key file (`{keyId: base64Key}`) holding exactly these keys, e.g. a probe key set. */
export function writeKeyFile(keys: Readonly<Record<string, Buffer>>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mp-keys-')), 'keys.json');
  const map = Object.fromEntries(
    Object.entries(keys).map(([keyId, key]) => [keyId, key.toString('base64')]),
  );
  writeFileSync(file, JSON.stringify(map));
  return file;
}
