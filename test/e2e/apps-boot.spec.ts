import { appSandbox, writeJoinKeys } from '../support/app-sandbox';
import {
  freePort,
  runApp,
  waitFor,
  waitForHttp,
  type AppName,
  type RunningApp,
} from '../support/processes';

type HealthBody = { status: string; details: Record<string, { status: string; message?: string }> };

describe('every app boots and reports its health', () => {
  const sandbox = appSandbox();
  const serviceEnv = () => sandbox.serviceEnv();

  /** The allocator refuses to start without key material (test/e2e/allocation-startup.spec.ts). */
  const appEnv: Partial<Record<AppName, Record<string, string>>> = {
    allocator: { JOIN_KEYS_FILE: writeJoinKeys('boot-1'), JOIN_ACTIVE_KEY_ID: 'boot-1' },
  };

  /** Shutdown hooks ran to the end (Nest then re-raises SIGTERM, which is the exit status). */
  async function expectCleanStop(app: RunningApp): Promise<void> {
    expect(await app.stop()).toBe('SIGTERM');
    expect(app.output()).toMatch(/shutting down on SIGTERM[\s\S]*stopped cleanly/);
  }

  async function startWithPort(
    name: AppName,
    portVariable: string,
    extra: Record<string, string> = {},
  ) {
    const port = await freePort();
    const app = sandbox.start(name, { ...serviceEnv(), [portVariable]: String(port), ...extra });
    return { app, healthUrl: `http://127.0.0.1:${port}/health`, port };
  }

  it.each(['dispatcher', 'matcher', 'allocator', 'maintenance'] as const)(
    '%s serves /health covering PostgreSQL and Redis on its own listener, and stops cleanly on SIGTERM',
    async (name) => {
      const { app, healthUrl } = await startWithPort(name, 'HEALTH_PORT', appEnv[name]);
      const body = (await waitForHttp(healthUrl)) as HealthBody;
      expect(body.status).toBe('ok');
      expect(body.details).toMatchObject({ postgres: { status: 'up' }, redis: { status: 'up' } });
      const metrics = await fetch(healthUrl.replace('/health', '/metrics')).then((r) => r.text());
      expect(metrics).toContain(`process_cpu_user_seconds_total{app="${name}"}`);
      await expectCleanStop(app);
    },
  );

  it('api serves /health on API_PORT, and the game server reports the API it depends on', async () => {
    const api = await startWithPort('api', 'API_PORT');
    const apiHealth = (await waitForHttp(api.healthUrl)) as HealthBody;
    expect(apiHealth.details).toMatchObject({
      postgres: { status: 'up' },
      redis: { status: 'up' },
    });
    expect(await waitForHttp(api.healthUrl.replace('/health', '/live'))).toEqual({ status: 'ok' });

    const gameServer = await startWithPort('game-server', 'HEALTH_PORT', {
      MATCHPLANE_API_URL: `http://127.0.0.1:${api.port}`,
    });
    const body = (await waitForHttp(gameServer.healthUrl)) as HealthBody;
    expect(body.details['matchplane-api']).toEqual({ status: 'up' });

    await expectCleanStop(api.app);
    await waitForHttp(gameServer.healthUrl, 503);
    await expectCleanStop(gameServer.app);
  });

  it('reports 503 naming Redis when Redis is unreachable, instead of crashing, while /live stays 200', async () => {
    const { app, healthUrl } = await startWithPort('matcher', 'HEALTH_PORT', {
      REDIS_PORT: String(await freePort()),
    });
    const body = (await waitForHttp(healthUrl, 503)) as { details: HealthBody['details'] };
    expect(body.details.postgres).toEqual({ status: 'up' });
    expect(body.details.redis?.status).toBe('down');
    expect(app.child.exitCode).toBeNull();
    expect(app.output()).toMatch(/Redis at 127\.0\.0\.1:\d+ is unreachable/);
    // Liveness (docker/k8s probes) must not restart an app for an outage it waits out.
    expect(await waitForHttp(healthUrl.replace('/health', '/live'))).toEqual({ status: 'ok' });
  });

  it('waits for an unreachable database with a log line per retry rather than exiting', async () => {
    const { app } = await startWithPort('dispatcher', 'HEALTH_PORT', {
      DATABASE_PORT: String(await freePort()),
    });
    const retryLines = () => app.output().match(/is unreachable .*; retry \d+ in \d+ ms/g) ?? [];
    await waitFor(() => Promise.resolve(retryLines().length >= 3 ? true : undefined), {
      what: 'three retry lines',
    });
    expect(app.child.exitCode).toBeNull();
  });

  it.each([
    [
      'api',
      { API_PORT: 'eighty' },
      /^api: Invalid configuration: API_PORT must be an integer from 1 to 65535 \(got "eighty"\)$/,
    ],
    [
      'dispatcher',
      { DATABASE_PORT: '99999' },
      /^dispatcher: Invalid configuration: DATABASE_PORT must be an integer/,
    ],
    [
      'game-server',
      { MATCHPLANE_API_URL: 'not a url' },
      /^game-server: Invalid configuration: MATCHPLANE_API_URL must be a URL/,
    ],
  ] as const)(
    '%s stops with one clear line on a malformed variable',
    async (name, env, expected) => {
      const { code, output } = await runApp(name, { ...serviceEnv(), ...env });
      expect(code).toBe(1);
      const lines = output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
    },
  );

  it('maintenance refuses to start with an idempotency window shorter than the session lifetime, naming both', async () => {
    const { code, output } = await runApp('maintenance', {
      ...serviceEnv(),
      RETENTION_IDEMPOTENCY_KEYS_SECONDS: '3600',
      SESSION_TTL_SECONDS: '86400',
    });
    expect(code).toBe(1);
    expect(output.trim()).toBe(
      'maintenance: Invalid configuration: RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least SESSION_TTL_SECONDS (86400): a client that logs in again may replay with its old key (got 3600)',
    );
  });

  it('refuses an inconsistent Redis Sentinel and PostgreSQL TLS configuration in one line, naming each problem and no password', async () => {
    const withoutRedisHost = Object.entries(serviceEnv()).filter(
      ([name]) => name !== 'REDIS_HOST' && name !== 'REDIS_PORT',
    );
    const { code, output } = await runApp('dispatcher', {
      ...Object.fromEntries(withoutRedisHost),
      REDIS_URL: 'redis://matchplane:s3cret-acl-pass@cache.internal',
      REDIS_SENTINELS: 'sentinel-1:26379,sentinel-2:26379',
      DATABASE_SSL_MODE: 'verify-ca',
    });
    expect(code).toBe(1);
    expect(output.trim()).toBe(
      'dispatcher: Invalid configuration: REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER is not: name the master the sentinels watch (their "sentinel monitor <name>"); DATABASE_SSL_MODE is verify-ca but DATABASE_SSL_CA_FILE is not set: verify-ca checks the server against that CA (use verify-full to check it against the system CAs and its name)',
    );
    expect(output).not.toContain('s3cret-acl-pass');
  });

  it('never prints a secret it was given, even when it is the value that failed validation', async () => {
    const { code, output } = await runApp('api', {
      ...serviceEnv(),
      API_PORT: 'x',
      REDIS_PASSWORD: 's3cret-redis-pass',
    });
    expect(code).toBe(1);
    expect(output).not.toContain('s3cret-redis-pass');
  });
});
