import { PLACEHOLDER_CA_PEM, placeholderCaFile } from '../../../test/support/placeholder-ca';
import { loadConfig, DatabaseConfig } from '@matchplane/config';
import { databaseSession, databaseTls } from './database-connection';
import { dataSourceOptions } from './data-source';

describe(databaseTls.name, () => {
  const caFile = placeholderCaFile();
  const ca = PLACEHOLDER_CA_PEM;

  const tls = (env: Record<string, string>) => databaseTls(loadConfig(DatabaseConfig, env));

  it('follows libpq: require encrypts only, or verifies against a given CA; verify-ca skips the name', () => {
    expect(tls({})).toBe(false);
    expect(tls({ DATABASE_SSL_MODE: 'require' })).toEqual({ rejectUnauthorized: false });
    const withCa = tls({ DATABASE_SSL_MODE: 'require', DATABASE_SSL_CA_FILE: caFile });
    expect(withCa).toMatchObject({ ca });
    expect(withCa && withCa.rejectUnauthorized).toBeUndefined();
    const verifyCa = tls({ DATABASE_SSL_MODE: 'verify-ca', DATABASE_SSL_CA_FILE: caFile });
    expect(verifyCa && verifyCa.checkServerIdentity?.('other.name', {} as never)).toBeUndefined();
    expect(tls({ DATABASE_SSL_MODE: 'verify-full' })).toEqual({});
    expect(tls({ DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: caFile })).toEqual({ ca });
  });
});

describe(databaseSession.name, () => {
  it("sends the configured session options before the app's own, which so win", () => {
    const config = loadConfig(DatabaseConfig, {
      DATABASE_OPTIONS: '-c statement_timeout=30000 -c lock_timeout=1',
    });
    expect(databaseSession(config, 'api', '-c lock_timeout=5000')).toMatchObject({
      options: '-c statement_timeout=30000 -c lock_timeout=1 -c lock_timeout=5000',
      application_name: 'api',
    });
    const options = dataSourceOptions(config, { lockTimeoutMs: 5000 });
    expect((options.extra as { options?: string }).options).toBe(
      '-c statement_timeout=30000 -c lock_timeout=1 -c lock_timeout=5000',
    );
  });

  it('names every connection DATABASE_APPLICATION_NAME when it is set', () => {
    const config = loadConfig(DatabaseConfig, { DATABASE_APPLICATION_NAME: 'mp-eu' });
    const options = dataSourceOptions(config, { applicationName: 'api' });
    expect((options as { applicationName?: string }).applicationName).toBe('mp-eu');
  });
});
