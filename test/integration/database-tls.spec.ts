import { chmodSync, chownSync, readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { DatabaseConfig, loadConfig } from '@matchplane/config';
import { dataSourceOptions } from '@matchplane/persistence';
import { makeScratch, PrivatePostgres, removeScratch } from '../chaos/private-services';
import { makeCertificates, type Certificates } from '../support/tls-certificates';

interface Session {
  ssl: boolean;
  statement_timeout: string;
  application_name: string;
}

/** PostgreSQL refuses a key file others may read; as root, the cluster runs as `postgres`. */
function keyForPostgres(key: string): void {
  chmodSync(key, 0o600);
  if (process.getuid?.() !== 0) return;
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('postgres:'));
  const [, , uid, gid] = entry?.split(':') ?? [];
  chownSync(key, Number(uid), Number(gid));
}

/**
 * DATABASE_URL's sslmode and sslrootcert reach a real PostgreSQL with TLS on, verified against a
 * throwaway CA; its options and application_name reach every session.
 */
describe('PostgreSQL over TLS, with session options', () => {
  let scratch: string;
  let postgres: PrivatePostgres;
  let certificates: Certificates;
  const dataSources: DataSource[] = [];

  beforeAll(async () => {
    scratch = makeScratch('matchplane-pg-tls-');
    certificates = await makeCertificates(scratch);
    keyForPostgres(certificates.key);
    postgres = await PrivatePostgres.create(scratch, 55470, [
      'ssl = on',
      `ssl_cert_file = '${certificates.cert}'`,
      `ssl_key_file = '${certificates.key}'`,
    ]);
  });

  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy().catch(() => undefined);
    await postgres?.destroy();
    removeScratch(scratch);
  });

  async function sessionOf(query: string): Promise<Session> {
    const config = loadConfig(DatabaseConfig, {
      DATABASE_URL: `postgres://postgres@localhost:${postgres.port}/postgres${query}`,
      DATABASE_POOL_SIZE: '1',
    });
    const dataSource = new DataSource(dataSourceOptions(config, { applicationName: 'tls-test' }));
    dataSources.push(dataSource);
    await dataSource.initialize();
    const [session] = await dataSource.query<Session[]>(
      `SELECT ssl, current_setting('statement_timeout') AS statement_timeout,
              current_setting('application_name') AS application_name
         FROM pg_stat_ssl WHERE pid = pg_backend_pid()`,
    );
    return session!;
  }

  it('verifies the server against the CA file, and sends the options and the application name', async () => {
    const ca = encodeURIComponent(certificates.ca);
    expect(
      await sessionOf(
        `?sslmode=verify-full&sslrootcert=${ca}&options=-c%20statement_timeout%3D1234&application_name=mp-tls`,
      ),
    ).toEqual({ ssl: true, statement_timeout: '1234ms', application_name: 'mp-tls' });
  });

  it('refuses a server the system CAs do not know under verify-full', async () => {
    await expect(sessionOf('?sslmode=verify-full')).rejects.toThrow(/certificate/);
  });

  it('connects in plain text with sslmode disable, as before', async () => {
    expect(await sessionOf('')).toEqual({
      ssl: false,
      statement_timeout: '0',
      application_name: 'tls-test',
    });
  });
});
