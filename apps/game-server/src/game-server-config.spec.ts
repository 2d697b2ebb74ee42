import { ConfigError, loadConfig, redactedConfig } from '@matchplane/config';
import { GameServerConfig } from './game-server.config';

const MATCH_ENV = {
  MATCHPLANE_SERVER_ID: 'gs-1',
  MATCHPLANE_SERVER_CREDENTIAL: 'mp_srv_secret_value',
  MATCHPLANE_MATCH_ID: '11111111-1111-4111-8111-111111111111',
  MATCHPLANE_JOIN_KEYS_FILE: '/run/secrets/join-keys.json',
  MATCHPLANE_SERVER_PORT: '7777',
};

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(GameServerConfig, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe(GameServerConfig.name, () => {
  it('without any match variable is a standby server that only serves health', () => {
    const config = loadConfig(GameServerConfig, {});
    expect(GameServerConfig.matchAssigned(config)).toBe(false);
    expect(config.MATCHPLANE_SERVER_ID).toBeUndefined();
  });

  it('reads a full match assignment, with the port as a number and HEALTH_PORT 0 allowed', () => {
    const config = loadConfig(GameServerConfig, { ...MATCH_ENV, HEALTH_PORT: '0' });
    expect(GameServerConfig.matchAssigned(config)).toBe(true);
    expect(config.MATCHPLANE_SERVER_PORT).toBe(7777);
    expect(config.HEALTH_PORT).toBe(0);
    expect(config.CONNECT_DEADLINE_MS).toBe(10_000);
    expect(config.BACKFILL_ON_NO_SHOW).toBe(true);
    expect(redactedConfig(config).MATCHPLANE_SERVER_CREDENTIAL).toBe('[redacted]');
  });

  it('heartbeats every third of SERVER_HEARTBEAT_TIMEOUT_MS unless SERVER_HEARTBEAT_INTERVAL_MS says otherwise', () => {
    expect(GameServerConfig.heartbeatIntervalMs(loadConfig(GameServerConfig, {}))).toBe(3_333);
    const short = loadConfig(GameServerConfig, { SERVER_HEARTBEAT_TIMEOUT_MS: '2000' });
    expect(GameServerConfig.heartbeatIntervalMs(short)).toBe(666);
    const own = loadConfig(GameServerConfig, { SERVER_HEARTBEAT_INTERVAL_MS: '250' });
    expect(GameServerConfig.heartbeatIntervalMs(own)).toBe(250);
    expect(problems({ SERVER_HEARTBEAT_TIMEOUT_MS: '100' }).join()).toMatch(
      /SERVER_HEARTBEAT_TIMEOUT_MS/,
    );
  });

  it('refuses a partial assignment, naming every missing variable', () => {
    const found = problems({ MATCHPLANE_SERVER_ID: 'gs-1' }).join('; ');
    for (const key of GameServerConfig.MATCH_VARIABLES.filter(
      (k) => k !== 'MATCHPLANE_SERVER_ID',
    )) {
      expect(found).toContain(`${key} `);
    }
  });

  it('refuses bad values without printing the credential', () => {
    const found = problems({
      ...MATCH_ENV,
      MATCHPLANE_SERVER_ID: 'gs\u0001',
      MATCHPLANE_MATCH_ID: 'A1111111-1111-4111-8111-111111111111',
      MATCHPLANE_SERVER_PORT: 'seven',
    }).join('; ');
    expect(found).toMatch(/MATCHPLANE_SERVER_ID must be 1-255 characters/);
    expect(found).toMatch(/MATCHPLANE_MATCH_ID must be a lowercase uuid/);
    expect(found).toMatch(/MATCHPLANE_SERVER_PORT must be an integer from 1 to 65535/);
    expect(found).not.toContain('mp_srv_secret_value');
  });

  it('reads BACKFILL_ON_NO_SHOW as true or false only', () => {
    expect(loadConfig(GameServerConfig, { BACKFILL_ON_NO_SHOW: 'false' }).BACKFILL_ON_NO_SHOW).toBe(
      false,
    );
    expect(loadConfig(GameServerConfig, { BACKFILL_ON_NO_SHOW: 'true' }).BACKFILL_ON_NO_SHOW).toBe(
      true,
    );
    expect(problems({ BACKFILL_ON_NO_SHOW: 'yes' })).toEqual([
      'BACKFILL_ON_NO_SHOW must be true or false (got "yes")',
    ]);
  });
});
