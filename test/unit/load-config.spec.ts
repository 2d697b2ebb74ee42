import { IsNotEmpty, IsString, MinLength } from 'class-validator';
import {
  ConfigError,
  EnvVar,
  IsIntInRange,
  ServiceConfig,
  loadConfig,
  redactedConfig,
} from '@matchplane/config';
import { ApiConfig } from '../../apps/api/src/api.config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import { GameServerConfig } from '../../apps/game-server/src/game-server.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';

class RequiresKeyFile extends ApiConfig {
  @EnvVar({ description: 'Path of the signing key file' })
  @IsString()
  @IsNotEmpty()
  KEY_FILE!: string;

  @EnvVar({ description: 'Signing secret', secret: true })
  @MinLength(8)
  SIGNING_SECRET = 'default-secret-value';
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe(loadConfig.name, () => {
  it('gives every app developer-machine defaults when nothing is set', () => {
    const api = loadConfig(ApiConfig, {});
    expect(api).toMatchObject({
      DATABASE_HOST: '127.0.0.1',
      DATABASE_PORT: 5432,
      DATABASE_USER: 'postgres',
      DATABASE_NAME: 'matchplane',
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: 6379,
      API_PORT: 3000,
    });
    expect(loadConfig(DispatcherConfig, {}).HEALTH_PORT).toBe(9101);
    expect(loadConfig(GameServerConfig, {}).MATCHPLANE_API_URL).toBe('http://127.0.0.1:3000');
    expect(loadConfig(MigrateConfig, {}).DATABASE_ADMIN_NAME).toBe('postgres');
  });

  it('parses numbers from their decimal strings', () => {
    expect(loadConfig(ApiConfig, { API_PORT: '8080', DATABASE_POOL_SIZE: '3' })).toMatchObject({
      API_PORT: 8080,
      DATABASE_POOL_SIZE: 3,
    });
  });

  it.each([
    ['API_PORT', 'abc', 'API_PORT must be an integer from 1 to 65535 (got "abc")'],
    ['API_PORT', '70000', 'API_PORT must be an integer from 1 to 65535 (got "70000")'],
    ['DATABASE_PORT', '54.5', 'DATABASE_PORT must be an integer from 1 to 65535 (got "54.5")'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of the following values:'],
    ['DATABASE_NAME', 'drop table', 'DATABASE_NAME must be a plain identifier'],
  ])('names %s and what it expected when it is malformed', (name, value, expected) => {
    const problems = problemsOf(() => loadConfig(ApiConfig, { [name]: value }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(expected);
  });

  it('reports a missing required variable by name', () => {
    const problems = problemsOf(() => loadConfig(RequiresKeyFile, {}));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^KEY_FILE .*\(it is not set\)$/);
  });

  it('reports every bad variable in one message line', () => {
    const error = (() => {
      try {
        loadConfig(ApiConfig, { API_PORT: 'x', REDIS_PORT: 'y' });
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.message.split('\n')).toHaveLength(1);
    expect(error.message).toMatch(/API_PORT .*; REDIS_PORT /);
  });

  it('never echoes the value of a secret, in errors or in the loggable view', () => {
    const problems = problemsOf(() =>
      loadConfig(RequiresKeyFile, { KEY_FILE: '/k', SIGNING_SECRET: '  ' }),
    );
    expect(problems.join()).not.toContain('  "');
    const config = loadConfig(RequiresKeyFile, {
      KEY_FILE: '/k',
      SIGNING_SECRET: 'hunter22-long',
      REDIS_PASSWORD: 'pw',
    });
    const view = JSON.stringify(redactedConfig(config));
    expect(view).not.toContain('hunter22-long');
    expect(view).not.toContain('"pw"');
    expect(view).toContain('/k');
  });

  it('treats an empty variable as unset, so the default applies', () => {
    expect(loadConfig(ApiConfig, { API_PORT: '' }).API_PORT).toBe(3000);
  });

  it("runs a class's checks across variables once each variable is valid, failing the same way", () => {
    class Window extends ServiceConfig {
      static override crossVariableProblems(config: Window): string[] {
        return config.FROM_MS <= config.TO_MS
          ? []
          : [`FROM_MS must be at most TO_MS (${config.TO_MS}) (got ${config.FROM_MS})`];
      }

      @EnvVar({ description: 'start' })
      @IsIntInRange(0, 1_000)
      FROM_MS = 0;

      @EnvVar({ description: 'end' })
      @IsIntInRange(0, 1_000)
      TO_MS = 10;
    }
    expect(loadConfig(Window, { FROM_MS: '5' }).FROM_MS).toBe(5);
    expect(problemsOf(() => loadConfig(Window, { FROM_MS: '50' }))).toEqual([
      'FROM_MS must be at most TO_MS (10) (got 50)',
    ]);
    // A malformed variable is reported on its own, before any check that would misread it.
    expect(problemsOf(() => loadConfig(Window, { FROM_MS: '5000' }))).toEqual([
      'FROM_MS must be an integer from 0 to 1000 (got "5000")',
    ]);
  });
});
