import { configProblems } from '../../../test/support/config-problems';
import { loadConfig, redactedConfig } from './load-config';
import { ServiceConfig } from './service.config';

function problemsOf(env: Record<string, string>): string[] {
  return configProblems(ServiceConfig, env);
}

describe('DATABASE_URL and REDIS_URL', () => {
  it('expand into the separate variables, %-escapes decoded', () => {
    const config = loadConfig(ServiceConfig, {
      DATABASE_URL: 'postgresql://app%40eu:p%3Ass%2Fw0rd@db.internal:6543/mp_prod',
      REDIS_URL: 'redis://:r3d%21s@cache.internal:6380',
    });
    expect(config).toMatchObject({
      DATABASE_HOST: 'db.internal',
      DATABASE_PORT: 6543,
      DATABASE_USER: 'app@eu',
      DATABASE_PASSWORD: 'p:ss/w0rd',
      DATABASE_NAME: 'mp_prod',
      REDIS_HOST: 'cache.internal',
      REDIS_PORT: 6380,
      REDIS_PASSWORD: 'r3d!s',
    });
  });

  it('take a part the URL leaves out from its own variable, or its default', () => {
    const config = loadConfig(ServiceConfig, {
      DATABASE_URL: 'postgres://app@db.internal/mp_prod',
      DATABASE_PASSWORD: 'from-a-secret',
      REDIS_URL: 'redis://cache.internal',
    });
    expect(config).toMatchObject({
      DATABASE_PORT: 5432,
      DATABASE_USER: 'app',
      DATABASE_PASSWORD: 'from-a-secret',
      REDIS_PORT: 6379,
      REDIS_PASSWORD: undefined,
    });
    expect(loadConfig(ServiceConfig, { REDIS_URL: 'redis://[::1]:7000/0' })).toMatchObject({
      REDIS_HOST: '::1',
      REDIS_PORT: 7000,
    });
  });

  it('accept a separate variable that says the same as the URL', () => {
    const config = loadConfig(ServiceConfig, {
      DATABASE_URL: 'postgres://app:pw@db.internal:5432/mp_prod',
      DATABASE_HOST: 'db.internal',
      DATABASE_PORT: '5432',
      DATABASE_PASSWORD: 'pw',
    });
    expect(config.DATABASE_HOST).toBe('db.internal');
  });

  it('refuse a separate variable that disagrees, naming both and showing no password', () => {
    expect(
      problemsOf({
        DATABASE_URL: 'postgres://app:url-secret@db.internal:5432/mp_prod',
        DATABASE_HOST: 'other.internal',
        DATABASE_PASSWORD: 'var-secret',
        REDIS_URL: 'redis://:redis-secret@cache.internal:6379',
        REDIS_PASSWORD: 'other-secret',
      }),
    ).toEqual([
      'DATABASE_HOST disagrees with DATABASE_URL: set one or the other, or the same value in both (got "other.internal", the URL says "db.internal")',
      'DATABASE_PASSWORD disagrees with DATABASE_URL: set one or the other, or the same value in both (both are secret, so not shown)',
      'REDIS_PASSWORD disagrees with REDIS_URL: set one or the other, or the same value in both (both are secret, so not shown)',
    ]);
  });

  it.each([
    [
      'a malformed URL',
      { DATABASE_URL: 'db.internal:5432 pw=hunter22' },
      'DATABASE_URL must be a URL like postgres://user:password@host:port[,host:port...]/database[?option=value&...] (a value was given; it is secret, so not shown)',
    ],
    [
      'a bad %-escape',
      { DATABASE_URL: 'postgres://app:hunter%zz@db/mp' },
      'DATABASE_URL must be a URL like postgres://user:password@host:port[,host:port...]/database[?option=value&...] (a value was given; it is secret, so not shown)',
    ],
    [
      'another scheme',
      { DATABASE_URL: 'mysql://app:hunter22@db/mp' },
      'DATABASE_URL must start with postgres:// or postgresql:// (got "mysql://...")',
    ],
    [
      'an option the app does not read',
      { DATABASE_URL: 'postgres://app:hunter22@db/mp?sslmode=require&sslcert=/c.pem' },
      'DATABASE_URL has options this app does not read (got "sslcert"; it reads target_session_attrs, sslmode, sslrootcert, options, application_name; other session settings go in options=-c name=value)',
    ],
    [
      'an option given twice',
      { DATABASE_URL: 'postgres://app:hunter22@db/mp?sslmode=require&sslmode=disable' },
      'DATABASE_URL gives the option "sslmode" twice',
    ],
    [
      'an empty host in a list',
      { DATABASE_URL: 'postgres://app:hunter22@db-1,,db-2/mp' },
      'DATABASE_URL must be a URL like postgres://user:password@host:port[,host:port...]/database[?option=value&...] (a value was given; it is secret, so not shown)',
    ],
    [
      'a path',
      { DATABASE_URL: 'postgres://app:hunter22@db/mp/x' },
      'DATABASE_URL names one database after the host (a path with "/" in it is not a database name)',
    ],
    [
      'another Redis scheme',
      { REDIS_URL: 'redis+sentinel://:hunter22@cache:26379' },
      'REDIS_URL must start with redis:// or rediss:// (got "redis+sentinel://...")',
    ],
    [
      'several Redis hosts',
      { REDIS_URL: 'redis://:hunter22@cache-1:6379,cache-2:6379' },
      'REDIS_URL names one host (for Redis Sentinel list the sentinels in REDIS_SENTINELS)',
    ],
    [
      'a Redis database index',
      { REDIS_URL: 'redis://:hunter22@cache:6379/2' },
      'REDIS_URL uses database 0 only (keys are separated by REDIS_KEY_PREFIX instead)',
    ],
  ])('refuse %s in one line without echoing the URL', (_, env, expected) => {
    const problems = problemsOf(env);
    expect(problems).toEqual([expected]);
    expect(problems.join()).not.toContain('hunter');
  });

  it('say which URL a part that fails its own check came from', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://app@db/my-db' })).toEqual([
      'DATABASE_NAME must be a plain identifier of at most 63 characters (got "my-db" from DATABASE_URL)',
    ]);
  });

  it('are secret in the loggable view, like the passwords they carry', () => {
    const config = loadConfig(ServiceConfig, {
      DATABASE_URL: 'postgres://app:hunter22@db/mp',
      REDIS_URL: 'redis://:hunter23@cache:6379',
    });
    const view = JSON.stringify(redactedConfig(config));
    expect(view).not.toContain('hunter');
    expect(view).toContain('"DATABASE_URL":"[redacted]"');
    expect(view).toContain('"REDIS_URL":"[redacted]"');
  });
});
