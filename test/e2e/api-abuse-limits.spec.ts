import { randomUUID } from 'node:crypto';
import { NotificationCloseCode, type SessionResponse } from '@matchplane/contracts';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { notificationsUrl, TestSocket } from '../support/notification-clients';
import { freePort, startApp, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

const WINDOW_MS = 60_000;
const SESSIONS_PER_ADDRESS = 6;
const REQUESTS_PER_SESSION = 20;
const PROBES_PER_SESSION = 5;
const REQUESTS_PER_SERVER = 5;
const REQUESTS_PER_ADDRESS = 30;
const SOCKETS_PER_SESSION = 2;
const SOCKETS_PER_ADDRESS = 3;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/**
 * Abuse limits through two API processes from dist/ on one database and Redis prefix. The APIs
 * trust one proxy hop, so each test speaks from its own client address (X-Forwarded-For) and the
 * per-address limits of one test never eat into another's.
 */
describe('API abuse limits across two replicas', () => {
  let db: TestDatabase;
  let prefix: string;
  const apis: RunningApp[] = [];
  const baseUrls: string[] = [];
  const sockets: TestSocket[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testRedisPrefix();
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      apis.push(
        startApp('api', {
          ...db.env,
          REDIS_KEY_PREFIX: prefix,
          API_HOST: '127.0.0.1',
          API_PORT: String(port),
          LOG_LEVEL: 'warn',
          API_TRUST_PROXY_HOPS: '1',
          API_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
          API_RATE_LIMIT_SESSIONS_PER_ADDRESS: String(SESSIONS_PER_ADDRESS),
          API_RATE_LIMIT_REQUESTS_PER_SESSION: String(REQUESTS_PER_SESSION),
          API_RATE_LIMIT_PROBES_PER_SESSION: String(PROBES_PER_SESSION),
          API_RATE_LIMIT_REQUESTS_PER_SERVER: String(REQUESTS_PER_SERVER),
          API_RATE_LIMIT_REQUESTS_PER_ADDRESS: String(REQUESTS_PER_ADDRESS),
          NOTIFY_MAX_SOCKETS_PER_SESSION: String(SOCKETS_PER_SESSION),
          NOTIFY_MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
        }),
      );
      baseUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(baseUrls.map((url) => waitForHttp(`${url}/health`)));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await Promise.all(apis.map((api) => api.stop()));
    await db?.drop();
    if (prefix) await deleteRedisPrefix(prefix);
  });

  /** A request to replica `replica` (0 or 1) as if from `address`. */
  async function call(
    replica: number,
    address: string,
    method: string,
    path: string,
    options: { token?: string; body?: unknown; idempotencyKey?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { 'x-forwarded-for': address };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrls[replica]}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  }

  async function newSession(address: string, replica = 0): Promise<SessionResponse> {
    const created = await call(replica, address, 'POST', '/v1/sessions', { body: {} });
    expect(created.status).toBe(201);
    return created.body as unknown as SessionResponse;
  }

  function expectRateLimited(answer: Answer): void {
    expect(answer.status).toBe(429);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
  }

  it('counts session creation per address across both replicas: 429 RATE_LIMITED with Retry-After', async () => {
    const address = '198.51.100.1';
    for (let i = 0; i < SESSIONS_PER_ADDRESS; i += 1) await newSession(address, i % 2);
    for (const replica of [0, 1]) {
      const refused = await call(replica, address, 'POST', '/v1/sessions', { body: {} });
      expectRateLimited(refused);
      expect(refused.body.detail).toContain(`at most ${SESSIONS_PER_ADDRESS}`);
    }
    // Another address is untouched.
    await newSession('198.51.100.2', 1);
  });

  it("refuses a flooding session on every replica while other sessions' requests are served", async () => {
    const address = '198.51.100.10';
    const flooder = await newSession(address);
    const neighbour = await newSession(address);
    for (let i = 0; i < REQUESTS_PER_SESSION; i += 1) {
      const served = await call(i % 2, address, 'GET', '/v1/queue/options', {
        token: flooder.token,
      });
      expect(served.status).toBe(200);
    }
    for (const replica of [0, 1]) {
      expectRateLimited(
        await call(replica, address, 'GET', '/v1/queue/options', { token: flooder.token }),
      );
      expectRateLimited(
        await call(replica, address, 'POST', '/v1/queue/tickets', {
          token: flooder.token,
          body: { mode: 'duel' },
          idempotencyKey: randomUUID(),
        }),
      );
    }
    const served = await call(1, address, 'GET', '/v1/queue/options', { token: neighbour.token });
    expect(served.status).toBe(200);
    // Refused requests are not counted against the address as well.
    const other = await newSession('198.51.100.11');
    expect(
      (await call(0, address, 'GET', '/v1/queue/options', { token: other.token })).status,
    ).toBe(200);
  });

  it('limits probe challenges per session below its other requests', async () => {
    const address = '198.51.100.20';
    const player = await newSession(address);
    for (let i = 0; i < PROBES_PER_SESSION; i += 1) {
      const issued = await call(i % 2, address, 'POST', '/v1/probes/eu-west/challenge', {
        token: player.token,
      });
      expect(issued.status).toBe(201);
    }
    const refused = await call(0, address, 'POST', '/v1/probes/us-east/challenge', {
      token: player.token,
    });
    expectRateLimited(refused);
    expect(refused.body.detail).toContain('probe challenges');
    // The session's other routes still answer.
    expect(
      (await call(1, address, 'GET', '/v1/queue/options', { token: player.token })).status,
    ).toBe(200);
  });

  it('limits server routes per credential and server id', async () => {
    const address = '198.51.100.30';
    const serverId = `srv-${randomUUID()}`;
    const credential = `cred-${randomUUID()}`;
    for (let i = 0; i < REQUESTS_PER_SERVER; i += 1) {
      // No allocation holds this credential: the guard refuses it, but only after it was counted.
      const refused = await call(i % 2, address, 'GET', `/v1/servers/${serverId}/roster`, {
        token: credential,
      });
      expect(refused.status).toBe(401);
    }
    expectRateLimited(
      await call(0, address, 'GET', `/v1/servers/${serverId}/roster`, { token: credential }),
    );
    expect(
      (
        await call(1, address, 'GET', `/v1/servers/${serverId}/roster`, {
          token: `cred-${randomUUID()}`,
        })
      ).status,
    ).toBe(401);
  });

  it('limits all player and server requests per address, whatever the session', async () => {
    const address = '198.51.100.40';
    const players = [
      await newSession(address),
      await newSession(address),
      await newSession(address),
    ];
    let served = 0;
    let refused: Answer | undefined;
    for (let i = 0; refused === undefined && i < REQUESTS_PER_ADDRESS + 5; i += 1) {
      const player = players[i % players.length] as SessionResponse;
      const answer = await call(i % 2, address, 'GET', '/v1/queue/options', {
        token: player.token,
      });
      if (answer.status === 200) served += 1;
      else refused = answer;
    }
    expect(served).toBe(REQUESTS_PER_ADDRESS);
    expectRateLimited(refused as Answer);
    expect(refused?.body.detail).toContain('from this address');
  });

  it('sends security headers (helmet) on answers and refusals', async () => {
    const address = '198.51.100.50';
    const answers = [
      await call(0, address, 'POST', '/v1/sessions', { body: {} }),
      await call(1, address, 'GET', '/v1/queue/options'),
      await call(0, address, 'GET', '/v1/openapi.json'),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([201, 401, 200]);
    for (const { headers } of answers) {
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(headers.get('x-powered-by')).toBeNull();
    }
  });

  function socket(replica: number, address: string, token: string): TestSocket {
    const opened = new TestSocket(notificationsUrl(baseUrls[replica] as string), {
      token,
      headers: { 'x-forwarded-for': address },
    });
    sockets.push(opened);
    return opened;
  }

  async function ready(replica: number, address: string, token: string): Promise<TestSocket> {
    const opened = socket(replica, address, token);
    await opened.waitFor((message) => message.type === 'ready', 'ready');
    return opened;
  }

  it('caps notification sockets per session on each replica (close 4429)', async () => {
    const player = await newSession('198.51.100.60');
    const first = await ready(0, '198.51.100.61', player.token);
    await ready(0, '198.51.100.62', player.token);
    const third = socket(0, '198.51.100.63', player.token);
    await expect(third.closed).resolves.toMatchObject({
      code: NotificationCloseCode.TOO_MANY_CONNECTIONS,
    });
    // Another replica has its own room, and a closed socket makes room again.
    await ready(1, '198.51.100.64', player.token);
    first.close();
    await first.closed;
    await ready(0, '198.51.100.65', player.token);
  });

  it('caps notification sockets per address before reading the token (close 4429)', async () => {
    const address = '198.51.100.70';
    const players = [
      await newSession('198.51.100.71'),
      await newSession('198.51.100.72'),
      await newSession('198.51.100.73'),
    ];
    const open = [];
    for (const player of players) open.push(await ready(1, address, player.token));
    const refused = socket(1, address, 'mps_not-a-session');
    await expect(refused.closed).resolves.toMatchObject({
      code: NotificationCloseCode.TOO_MANY_CONNECTIONS,
    });
    // Without the cap the same made-up token is 4401.
    const elsewhere = socket(1, '198.51.100.74', 'mps_not-a-session');
    await expect(elsewhere.closed).resolves.toMatchObject({
      code: NotificationCloseCode.UNAUTHENTICATED,
    });
    open[0]?.close();
    await open[0]?.closed;
    await ready(1, address, (players[0] as SessionResponse).token);
  });
});
