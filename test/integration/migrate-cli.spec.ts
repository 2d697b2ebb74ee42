import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { allMigrations } from '@matchplane/migrations';
import { createTestDatabase, withAdminClient, type TestDatabase } from '../support/database';
import { REPO_ROOT, appEntry } from '../support/processes';
import { TEST_DATABASE_PREFIX, testServices, uniqueSuffix } from '../support/test-env';

const ENTRY = appEntry('migrate');
const SOURCES = ['apps/migrate/src', 'libs/config/src', 'libs/persistence/src', 'migrations'];

function newestSourceMtime(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return Math.max(newest, newestSourceMtime(full));
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')
      ? Math.max(newest, statSync(full).mtimeMs)
      : newest;
  }, 0);
}

/** The CLI runs from dist/; rebuild only when a source it is made of changed since the last build. */
function ensureBuilt(): void {
  const builtAt = (() => {
    try {
      return statSync(ENTRY).mtimeMs;
    } catch {
      return 0;
    }
  })();
  const changedAt = Math.max(...SOURCES.map((dir) => newestSourceMtime(path.join(REPO_ROOT, dir))));
  if (builtAt > changedAt) return;
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(
      `npm run build failed:\n${stdout?.toString() ?? ''}${stderr?.toString() ?? ''}`,
    );
  }
  // An incremental build leaves unchanged outputs untouched; mark this one current.
  const now = new Date();
  utimesSync(ENTRY, now, now);
}

interface CliResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

function runMigrate(env: Record<string, string>, args: string[] = []): Promise<CliResult> {
  const child = spawn(process.execPath, [ENTRY, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code, signal) =>
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr }),
    ),
  );
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

const names = allMigrations.map((migration) => new migration().name);

// Each test spawns Node processes; a loaded CI machine needs more than Jest's default 5 s.
jest.setTimeout(30_000);

describe('migrate CLI', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  describe('on a database that does not exist yet', () => {
    const name = `${TEST_DATABASE_PREFIX}${uniqueSuffix()}`;
    const env: Record<string, string> = {
      DATABASE_HOST: testServices.host,
      DATABASE_PORT: String(testServices.port),
      DATABASE_USER: testServices.user,
      DATABASE_NAME: name,
      DATABASE_ADMIN_NAME: testServices.adminDatabase,
      ...(testServices.password ? { DATABASE_PASSWORD: testServices.password } : {}),
    };

    afterAll(() =>
      withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
    );

    it('creates the database and applies every migration, one progress line each', async () => {
      const result = await runMigrate(env);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const output = lines(result.stdout);
      expect(output[0]).toBe(`migrate: created database ${name}`);
      expect(
        output.filter((line) => line.startsWith('migrate: applied ') && line.endsWith(' ms)')),
      ).toEqual(
        names.map((migration) => expect.stringContaining(`applied ${migration} (`) as string),
      );
      const rows = await withAdminClient(async (client) => {
        const databases = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
          name,
        ]);
        return databases.rowCount;
      });
      expect(rows).toBe(1);
    });

    it('lists every migration as applied with --status', async () => {
      const result = await runMigrate(env, ['--status']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(`${name}: ${names.length} applied, 0 pending`);
      for (const migration of names)
        expect(result.stdout).toMatch(new RegExp(`applied +${migration} +\\d{4}-\\d\\d-\\d\\dT`));
    });

    it('has nothing to do when run again', async () => {
      const result = await runMigrate(env);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(lines(result.stdout)).toEqual([
        `migrate: nothing to apply; ${testServices.host}:${testServices.port}/${name} is up to date`,
      ]);
    });

    it('refuses to roll back more than is applied, then rolls everything back', async () => {
      const tooMany = await runMigrate(env, [`--rollback=${names.length + 1}`]);
      expect(tooMany.code).toBe(1);
      expect(lines(tooMany.stderr)).toEqual([
        expect.stringContaining(`only ${names.length} applied`) as string,
      ]);

      const result = await runMigrate(env, [`--rollback=${names.length}`]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(
        lines(result.stdout).filter(
          (line) => line.startsWith('migrate: reverted ') && line.endsWith(' ms)'),
        ),
      ).toEqual(
        [...names]
          .reverse()
          .map((migration) => expect.stringContaining(`reverted ${migration} (`) as string),
      );
      const status = await runMigrate(env, ['--status']);
      expect(status.stdout).toContain(`0 applied, ${names.length} pending`);
    });
  });

  describe('argument and connection errors', () => {
    let db: TestDatabase;

    beforeAll(async () => {
      db = await createTestDatabase({ migrated: false });
    });

    afterAll(() => db.drop());

    it.each([
      [['--bogus']],
      [['--rollback=abc']],
      [['--rollback=0']],
      [['--status', '--rollback=1']],
    ])('prints usage to stderr and exits 2 for %j', async (args) => {
      const result = await runMigrate(db.env, args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('usage: migrate [--status | --rollback=N | --help]');
    });

    it('prints usage to stdout and exits 0 for --help', async () => {
      const result = await runMigrate(db.env, ['--help']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain('usage: migrate');
    });

    it('reports an unreachable database in one line naming it and the cause, and exits 1', async () => {
      const result = await runMigrate({ ...db.env, DATABASE_PORT: '1' });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^migrate: cannot connect to PostgreSQL at ${db.env.DATABASE_HOST}:1/${db.name}: .*ECONNREFUSED`,
          ),
        ) as string,
      ]);
    }, 20_000);

    it('exits 1 with one line when --status is asked of a database that does not exist', async () => {
      const result = await runMigrate({ ...db.env, DATABASE_NAME: `${db.name}_missing` }, [
        '--status',
      ]);
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual([expect.stringMatching(/does not exist/) as string]);
    });
  });
});
