import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import { MaintenanceModule } from '../../apps/maintenance/src/maintenance.module';
import { RetentionScheduler } from '../../apps/maintenance/src/retention/retention.scheduler';
import { createTestDatabase, withAdminClient, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { freePort, waitFor } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

const DAY = 86_400_000;

/*
 * The real MaintenanceModule booted in this process (PostgreSQL, Redis, health listener and all),
 * its log lines captured: what an operator sees of the retention loop.
 */

/** Keeps every line the app logs, as `level Context: message`. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];

  log(message: unknown, context?: unknown): void {
    this.lines.push(`log ${String(context)}: ${String(message)}`);
  }

  warn(message: unknown, context?: unknown): void {
    this.lines.push(`warn ${String(context)}: ${String(message)}`);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push(`error ${String(rest[rest.length - 1])}: ${String(message)}`);
  }
}

interface Maintenance {
  app: INestApplicationContext;
  logs: CapturingLogger;
  metricsUrl: string;
  /** Log lines of the retention loop, in order. */
  passLines(): string[];
  metric(name: string, labels?: string): Promise<number | undefined>;
}

async function startMaintenance(
  db: TestDatabase,
  prefix: string,
  env: Record<string, string> = {},
) {
  const port = await freePort();
  const config = loadConfig(MaintenanceConfig, {
    ...db.env,
    REDIS_KEY_PREFIX: prefix,
    HEALTH_HOST: '127.0.0.1',
    HEALTH_PORT: String(port),
    ...env,
  });
  const logs = new CapturingLogger();
  const app = await NestFactory.createApplicationContext(MaintenanceModule.forRoot(config), {
    logger: logs,
    abortOnError: false,
  });
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  const maintenance: Maintenance = {
    app,
    logs,
    metricsUrl,
    passLines: () => logs.lines.filter((line) => line.includes(`${RetentionScheduler.name}:`)),
    async metric(name, labels = '') {
      const text = await (await fetch(metricsUrl)).text();
      const line = text
        .split('\n')
        .find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    },
  };
  return maintenance;
}

/** `rows` completed keys of a new player's, the newest `ageDays` old, through IdempotencyStore. */
async function seedIdempotencyKeys(ds: DataSource, rows: number, ageDays: number): Promise<void> {
  const f = TestFactories.standalone(ds);
  await f.idempotencyKeys(await f.player(), rows, new Date(Date.now() - ageDays * DAY));
}

/** An outbox event through the OutboxWriter, left pending or dead-lettered as a dispatcher does. */
async function seedOutbox(ds: DataSource, status: 'pending' | 'dead'): Promise<void> {
  const f = TestFactories.standalone(ds);
  // Created just now, so the dead letter holds back no key this suite seeds (all days old).
  if (status === 'pending') await f.outboxEvents(1);
  else await f.deadLetteredOutboxEvents(1, { deadAt: new Date(), createdAt: new Date() });
}

describe(RetentionScheduler.name, () => {
  let db: TestDatabase;
  let ds: DataSource;
  let maintenance: Maintenance | undefined;
  const prefix = testRedisPrefix();

  beforeEach(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
  });

  afterEach(async () => {
    await maintenance?.app.close();
    maintenance = undefined;
    await withAdminClient((client) =>
      client.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`),
    );
    await db.drop();
  });

  afterAll(() => deleteRedisPrefix(prefix));

  it('runs a pass at start-up and reports it in one log line and in /metrics', async () => {
    await seedIdempotencyKeys(ds, 25, 3);
    await seedOutbox(ds, 'dead');
    await seedOutbox(ds, 'pending');
    await seedOutbox(ds, 'pending');

    maintenance = await startMaintenance(db, prefix);
    const [line] = await waitFor(async () => {
      const lines = maintenance!.passLines();
      return Promise.resolve(lines.length > 0 ? lines : undefined);
    });

    expect(line).toMatch(/^log RetentionScheduler: retention pass complete in \d+ ms/);
    expect(line).toContain('idempotency_keys=25 ');
    expect(line).toContain('deletion lag outbox_dead_letters=0s');
    expect(line).toContain('dead letters 1; outbox backlog 2');
    expect(
      await maintenance.metric('retention_rows_purged_total', 'policy="idempotency_keys"'),
    ).toBe(25);
    expect(await maintenance.metric('retention_rows_purged_total', 'policy="matches"')).toBe(0);
    expect(
      await maintenance.metric('retention_deletion_lag_seconds', 'policy="idempotency_keys"'),
    ).toBe(0);
    expect(await maintenance.metric('retention_passes_total', 'outcome="complete"')).toBe(1);
    expect(await maintenance.metric('maintenance_outbox_dead_letters')).toBe(1);
    expect(await maintenance.metric('maintenance_outbox_pending_events')).toBe(2);
    expect(await maintenance.metric('retention_idempotency_hold_seconds')).toBe(0);
  });

  it('outlives a database outage: one clear line per failed pass, and purges again once it is back', async () => {
    maintenance = await startMaintenance(db, prefix, { RETENTION_PASS_INTERVAL_MS: '1000' });
    await waitFor(async () =>
      Promise.resolve(maintenance!.passLines().length > 0 ? true : undefined),
    );

    // The outage: the app's connections are cut and new ones refused.
    await withAdminClient(async (client) => {
      await client.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
      await client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'maintenance'`,
        [db.name],
      );
    });
    const failures = await waitFor(
      async () => {
        const lines = maintenance!
          .passLines()
          .filter((line) => line.includes('retention pass failed'));
        return Promise.resolve(lines.length >= 2 ? lines : undefined);
      },
      { timeoutMs: 30_000, what: 'two failed passes' },
    );
    expect(failures[0]).toMatch(
      /^warn RetentionScheduler: retention pass failed, next pass in 1 s: .+/,
    );
    expect(
      await maintenance.metric('retention_passes_total', 'outcome="failed"'),
    ).toBeGreaterThanOrEqual(2);

    await withAdminClient((client) =>
      client.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`),
    );
    await seedIdempotencyKeys(ds, 7, 3);
    await waitFor(
      async () =>
        Promise.resolve(
          maintenance!.passLines().some((line) => line.includes('idempotency_keys=7 '))
            ? true
            : undefined,
        ),
      { timeoutMs: 30_000, what: 'a pass purging the keys seeded after the outage' },
    );
    const [left] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM idempotency_keys`,
    );
    expect(left!.n).toBe(0);
  });

  it('stops cleanly on shutdown, in the middle of a pass', async () => {
    await seedIdempotencyKeys(ds, 500, 3);
    maintenance = await startMaintenance(db, prefix, {
      RETENTION_BATCH_SIZE: '100',
      RETENTION_BATCH_PAUSE_MS: '60000',
      RETENTION_PRESSURE_PAUSE_MS: '60000',
    });
    // The first batch is done and the pass is pausing before its next.
    await waitFor(async () => {
      const [row] = await ds.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM idempotency_keys`,
      );
      return row!.n === 400 ? true : undefined;
    });

    const started = Date.now();
    await maintenance.app.close();
    const tookMs = Date.now() - started;
    const lines = maintenance.passLines();
    maintenance = undefined;

    expect(tookMs).toBeLessThan(5_000);
    expect(lines).toEqual([
      expect.stringMatching(/^log RetentionScheduler: retention pass interrupted in \d+ ms/),
    ]);
    expect(lines[0]).toContain('idempotency_keys=100 ');
  });
});
