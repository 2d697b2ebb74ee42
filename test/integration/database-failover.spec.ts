import { createServer, type AddressInfo } from 'node:net';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseConfig, loadConfig } from '@matchplane/config';
import { dataSourceOptions, Migrator } from '@matchplane/persistence';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { sleep } from '../bench/bench.processes';
import {
  freePortFrom,
  makeScratch,
  PrivatePostgres,
  removeScratch,
} from '../chaos/private-services';

interface Server {
  port: number;
  in_recovery: boolean;
}

/** Which server a pooled connection reached, and whether it is a standby. */
async function serverOf(dataSource: DataSource): Promise<Server> {
  const [row] = await dataSource.query<Server[]>(
    'SELECT inet_server_port() AS port, pg_is_in_recovery() AS in_recovery',
  );
  return row!;
}

/** Waits until the standby replayed the primary's row (replication is asynchronous). */
async function replicated(port: number): Promise<void> {
  for (;;) {
    const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM failover_marks WHERE mark = 'before'",
      );
      if (rows[0]?.n === 1) return;
    } catch {
      // Not there yet.
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(100);
  }
}

/**
 * A DATABASE_URL listing several hosts, as libpq reads it: each new connection walks the list and
 * keeps the first host DATABASE_TARGET_SESSION_ATTRS accepts, so the pool reaches the primary
 * whichever host is listed first, and the new primary after a failover.
 */
describe('PostgreSQL host lists', () => {
  let scratch: string;
  let primary: PrivatePostgres;
  let standby: PrivatePostgres;
  let closedPort: number;
  const dataSources: DataSource[] = [];

  beforeAll(async () => {
    scratch = makeScratch('matchplane-pg-failover-');
    primary = await PrivatePostgres.create(scratch, 55440);
    standby = await PrivatePostgres.standbyOf(primary, scratch, 55450);
    await standby.waitReady();
    closedPort = await freePortFrom(55460);
  });

  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy().catch(() => undefined);
    await standby?.destroy();
    await primary?.destroy();
    removeScratch(scratch);
  });

  async function open(url: string): Promise<DataSource> {
    const config = loadConfig(DatabaseConfig, { DATABASE_URL: url, DATABASE_POOL_SIZE: '2' });
    const dataSource = new DataSource(dataSourceOptions(config, { applicationName: 'ha-test' }));
    dataSources.push(dataSource);
    return dataSource.initialize();
  }

  it('skips a host that refuses connections', async () => {
    const dataSource = await open(
      `postgres://postgres@127.0.0.1:${closedPort},127.0.0.1:${primary.port}/postgres`,
    );
    expect(await serverOf(dataSource)).toEqual({ port: primary.port, in_recovery: false });
  });

  it('skips a host that accepts the connection and never answers, after its connect timeout', async () => {
    const silent = createServer(() => undefined); // holds every socket open, says nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const dataSource = await open(
        `postgres://postgres@127.0.0.1:${port},127.0.0.1:${primary.port}/postgres?target_session_attrs=read-write`,
      );
      expect(await serverOf(dataSource)).toEqual({ port: primary.port, in_recovery: false });
    } finally {
      silent.close();
      silent.unref();
    }
  });

  it('reaches a Unix socket directory listed as a host, as before', async () => {
    const config = loadConfig(DatabaseConfig, {
      DATABASE_HOST: `${primary.dir},127.0.0.1:${standby.port}`,
      DATABASE_PORT: String(primary.port),
      DATABASE_NAME: 'postgres',
      DATABASE_TARGET_SESSION_ATTRS: 'read-write',
    });
    const dataSource = new DataSource(dataSourceOptions(config, { applicationName: 'ha-test' }));
    dataSources.push(dataSource);
    await dataSource.initialize();
    const [row] = await dataSource.query<{ over_socket: boolean }[]>(
      'SELECT inet_server_port() IS NULL AS over_socket',
    );
    expect(row?.over_socket).toBe(true);
  });

  it('skips a standby for read-write, and stays on it for any', async () => {
    const hosts = `127.0.0.1:${standby.port},127.0.0.1:${primary.port}`;
    const readWrite = await open(
      `postgres://postgres@${hosts}/postgres?target_session_attrs=read-write`,
    );
    expect(await serverOf(readWrite)).toEqual({ port: primary.port, in_recovery: false });
    const any = await open(`postgres://postgres@${hosts}/postgres`);
    expect(await serverOf(any)).toEqual({ port: standby.port, in_recovery: true });
  });

  it('creates a missing database on the primary for migrate, whichever host is listed first', async () => {
    const config = loadConfig(MigrateConfig, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/mp_created?target_session_attrs=read-write`,
    });
    expect(await Migrator.ensureDatabase(config)).toBe(true);
    expect(await Migrator.ensureDatabase(config)).toBe(false);
  });

  it('reconnects to the promoted standby after the primary is lost', async () => {
    const dataSource = await open(
      `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`,
    );
    await dataSource.query('CREATE TABLE failover_marks (mark text)');
    await dataSource.query("INSERT INTO failover_marks VALUES ('before')");
    expect((await serverOf(dataSource)).port).toBe(primary.port);
    await replicated(standby.port);

    await primary.crash();
    await standby.promote();

    // The pool's connections to the lost primary fail; new ones walk the list again. A few
    // statements may fail meanwhile, as any client's do during a failover.
    let server: Server | undefined;
    for (let attempt = 0; attempt < 100 && server === undefined; attempt += 1) {
      try {
        await dataSource.query("INSERT INTO failover_marks VALUES ('after')");
        server = await serverOf(dataSource);
      } catch {
        await sleep(100);
      }
    }
    expect(server).toEqual({ port: standby.port, in_recovery: false });
    const marks = await dataSource.query<{ mark: string }[]>(
      'SELECT mark FROM failover_marks ORDER BY mark',
    );
    expect(marks.map(({ mark }) => mark)).toEqual(['after', 'before']);
  });
});
