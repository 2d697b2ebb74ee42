import {
  ErrorCode,
  IDEMPOTENCY_KEY_HEADER,
  type LobbyResponse,
  type ProbeAnswerResponse,
  type QueueOptionsResponse,
  type SessionResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type FetchLike } from './http.transport';
import { PlayerClient, TicketWaitTimeoutError, type HeartbeatStopReason } from './player-client';
import { MatchplaneApiError, MatchplaneNetworkError, parseRetryAfter } from './sdk.errors';

const BASE_URL = 'http://mm.test:8080';

interface RecordedCall {
  url: string;
  /** Path under /v1, e.g. `queue/tickets`. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

type Handler = (call: RecordedCall, init: RequestInit) => Response | Promise<Response>;

/** A fetch double that records every call and answers through `handler`. */
function fakeFetch(handler: Handler): { fetch: FetchLike; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const fetch: FetchLike = async (url, init) => {
    const call: RecordedCall = {
      url,
      path: url.replace(`${BASE_URL}/v1/`, ''),
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    return handler(call, init);
  };
  return { fetch, calls };
}

/** Answers the calls in order, each reply once; a thrown Error is a network failure. */
function inOrder(...replies: (Response | Error)[]): Handler {
  return () => {
    const reply = replies.shift();
    if (reply === undefined) throw new Error('unexpected extra call');
    if (reply instanceof Error) throw reply;
    return reply;
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

const problem = (status: number, code: ErrorCode, headers: Record<string, string> = {}): Response =>
  new Response(
    JSON.stringify({
      type: 'about:blank',
      title: 'Problem',
      status,
      code,
      detail: `because ${code}`,
    }),
    { status, headers: { 'content-type': 'application/problem+json; charset=utf-8', ...headers } },
  );

const networkError = (): Error => new TypeError('fetch failed');

function newTicket(overrides: Partial<TicketResponse> = {}): TicketResponse {
  return {
    id: 't-1',
    playerId: 'p-1',
    mode: 'duel',
    state: 'SEARCHING',
    revision: 1,
    regionsMeasured: ['eu-west'],
    predictedRttMs: { 'eu-west': 20 },
    enqueuedAt: '2025-01-01T00:00:00.000Z',
    lastHeartbeatAt: '2025-01-01T00:00:00.000Z',
    waitSeconds: 0,
    attributes: {},
    ...overrides,
  };
}

const session: SessionResponse = {
  token: 'mp_sess_secret',
  expiresAt: '2025-01-02T00:00:00.000Z',
  playerId: 'p-1',
  deviceSecret: 'mp_dev_secret',
};

const queueOptions: QueueOptionsResponse = {
  modes: [
    { mode: 'duel', teamSize: 1, teamCount: 2, teamSizes: [1, 1], queueDepth: 0, attributes: [] },
  ],
  regions: ['eu-west', 'us-east'],
  heartbeatIntervalMs: 5,
};

const fastRetries = { retries: 2, baseDelayMs: 1, maxDelayMs: 2 };

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe(PlayerClient.name, () => {
  describe('session and authorization', () => {
    it('signs in without a token, then sends the bearer token with every call under /v1', async () => {
      const { fetch, calls } = fakeFetch(inOrder(json(201, session), json(200, queueOptions)));
      const client = new PlayerClient({ baseUrl: `${BASE_URL}/`, fetch, token: 'stale' });

      await expect(client.createSession()).resolves.toEqual(session);
      await client.queueOptions();

      expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
        `POST ${BASE_URL}/v1/sessions`,
        `GET ${BASE_URL}/v1/queue/options`,
      ]);
      expect(calls[0]?.headers.authorization).toBeUndefined();
      expect(calls[0]?.body).toEqual({});
      expect(calls[1]?.headers.authorization).toBe('Bearer mp_sess_secret');
      expect(client.token).toBe('mp_sess_secret');
      expect(client.session?.deviceSecret).toBe('mp_dev_secret');
    });

    it('keeps a base path and resumes a guest with its device secret', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(json(201, { ...session, deviceSecret: undefined })),
      );
      const client = new PlayerClient({ baseUrl: `${BASE_URL}/matchplane`, fetch });
      await client.resumeGuest('mp_dev_secret');
      expect(calls[0]?.url).toBe(`${BASE_URL}/matchplane/v1/sessions`);
      expect(calls[0]?.body).toEqual({ provider: 'guest', credential: 'mp_dev_secret' });
    });

    it('ends the session, forgetting the token, and treats 401 as already ended', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(new Response(null, { status: 204 }), problem(401, ErrorCode.UNAUTHENTICATED)),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'mp_sess_secret' });
      await client.endSession();
      expect(calls[0]).toMatchObject({ method: 'DELETE', path: 'sessions/current' });
      expect(calls[0]?.headers.authorization).toBe('Bearer mp_sess_secret');
      expect(client.token).toBeUndefined();

      client.setToken('mp_sess_expired');
      await expect(client.endSession()).resolves.toBeUndefined();
      expect(client.token).toBeUndefined();
    });
  });

  describe('queue tickets', () => {
    it('sends the mode, and the attributes when given', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(json(201, newTicket()), json(201, newTicket({ attributes: { build: '1.5' } }))),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'tok' });
      await client.enqueue('duel');
      await expect(
        client.enqueue('duel', { attributes: { build: '1.5', skill: 7 } }),
      ).resolves.toMatchObject({ attributes: { build: '1.5' } });
      expect(calls.map((c) => c.body)).toEqual([
        { mode: 'duel' },
        { mode: 'duel', attributes: { build: '1.5', skill: 7 } },
      ]);
    });
  });

  describe('idempotent retries', () => {
    it('reuses the Idempotency-Key across retries of one enqueue and uses a fresh one for the next', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          networkError(),
          problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE),
          json(201, newTicket()),
          problem(409, ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS),
          json(201, newTicket({ id: 't-2' })),
        ),
      );
      const client = new PlayerClient({
        baseUrl: BASE_URL,
        fetch,
        token: 'tok',
        retries: fastRetries,
      });

      await expect(client.enqueue('duel')).resolves.toMatchObject({ id: 't-1' });
      await expect(client.enqueue('duel')).resolves.toMatchObject({ id: 't-2' });

      const keys = calls.map((c) => c.headers[IDEMPOTENCY_KEY_HEADER]);
      expect(keys.every((key) => typeof key === 'string' && key.length > 0)).toBe(true);
      expect(new Set(keys.slice(0, 3)).size).toBe(1);
      expect(new Set(keys.slice(3)).size).toBe(1);
      expect(keys[3]).not.toBe(keys[0]);
      expect(calls.every((c) => c.path === 'queue/tickets' && c.method === 'POST')).toBe(true);
      expect(calls[0]?.body).toEqual({ mode: 'duel' });
    });

    it('fails over to the next replica with the same Idempotency-Key and stays there', async () => {
      const replicas = ['http://api-0.test', 'http://api-1.test'];
      const calls: { url: string; key: string | undefined }[] = [];
      const fetch: FetchLike = (url, init) => {
        calls.push({ url, key: (init.headers as Record<string, string>)[IDEMPOTENCY_KEY_HEADER] });
        if (url.startsWith(replicas[0]!)) return Promise.reject(new TypeError('fetch failed'));
        return Promise.resolve(json(201, newTicket()));
      };
      const client = new PlayerClient({
        baseUrl: replicas,
        fetch,
        token: 'tok',
        retries: fastRetries,
      });

      await expect(client.enqueue('duel')).resolves.toMatchObject({ id: 't-1' });
      await client.enqueue('duel');

      expect(calls.map((c) => c.url)).toEqual([
        `${replicas[0]}/v1/queue/tickets`,
        `${replicas[1]}/v1/queue/tickets`,
        `${replicas[1]}/v1/queue/tickets`,
      ]);
      expect(calls[1]?.key).toBe(calls[0]?.key);
    });

    it('fails over on 502/503/504 from a replica, but not on an answer about the request', async () => {
      const replicas = ['http://api-0.test', 'http://api-1.test'];
      const { fetch, calls } = fakeFetch(
        inOrder(
          problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE),
          problem(409, ErrorCode.TICKET_ALREADY_LIVE),
        ),
      );
      const client = new PlayerClient({
        baseUrl: replicas,
        fetch,
        token: 'tok',
        retries: fastRetries,
      });
      await expect(client.enqueue('duel')).rejects.toMatchObject({ status: 409 });
      expect(calls.map((c) => c.url)).toEqual([
        `${replicas[0]}/v1/queue/tickets`,
        `${replicas[1]}/v1/queue/tickets`,
      ]);
    });

    it('refuses an empty list of replicas', () => {
      expect(() => new PlayerClient({ baseUrl: [] })).toThrow(
        'at least one API base URL is required',
      );
    });

    it('gives up after the configured retries and throws the last failure', async () => {
      const { fetch, calls } = fakeFetch(() => problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE));
      const client = new PlayerClient({
        baseUrl: BASE_URL,
        fetch,
        retries: { ...fastRetries, retries: 1 },
      });
      const err = await rejection(client.enqueue('duel'));
      expect(err).toBeInstanceOf(MatchplaneApiError);
      expect((err as MatchplaneApiError).status).toBe(503);
      expect(calls).toHaveLength(2);
    });

    it.each([
      [400, ErrorCode.VALIDATION_FAILED],
      [409, ErrorCode.TICKET_ALREADY_LIVE],
      [422, ErrorCode.NO_LATENCY_MEASURED],
      [429, ErrorCode.COOLDOWN_ACTIVE],
      [501, ErrorCode.INTERNAL],
    ])('does not retry a %i %s', async (status, code) => {
      const { fetch, calls } = fakeFetch(() => problem(status, code, { 'retry-after': '0' }));
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: fastRetries });
      await expect(client.enqueue('duel')).rejects.toMatchObject({ status, code });
      expect(calls).toHaveLength(1);
    });

    it('retries a 429 after its Retry-After only when the caller opts in', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          problem(429, ErrorCode.RATE_LIMITED, { 'retry-after': '1' }),
          json(201, newTicket()),
        ),
      );
      const client = new PlayerClient({
        baseUrl: BASE_URL,
        fetch,
        retries: { ...fastRetries, retryRateLimited: true },
      });
      const started = Date.now();
      await expect(client.enqueue('duel')).resolves.toMatchObject({ id: 't-1' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(calls[1]?.headers[IDEMPOTENCY_KEY_HEADER]).toBe(
        calls[0]?.headers[IDEMPOTENCY_KEY_HEADER],
      );
    });

    it('throws at once when Retry-After exceeds what the caller will wait', async () => {
      const { fetch, calls } = fakeFetch(() =>
        problem(429, ErrorCode.COOLDOWN_ACTIVE, { 'retry-after': '600' }),
      );
      const client = new PlayerClient({
        baseUrl: BASE_URL,
        fetch,
        retries: { ...fastRetries, retryRateLimited: true, maxRetryAfterMs: 60_000 },
      });
      await expect(client.enqueue('duel')).rejects.toMatchObject({ retryAfterSeconds: 600 });
      expect(calls).toHaveLength(1);
    });

    it('retries reads without an Idempotency-Key', async () => {
      const { fetch, calls } = fakeFetch(inOrder(networkError(), json(200, newTicket())));
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: fastRetries });
      await expect(client.ticket('t-1')).resolves.toMatchObject({ id: 't-1' });
      expect(calls).toHaveLength(2);
      expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
        'GET queue/tickets/t-1',
        'GET queue/tickets/t-1',
      ]);
      expect(calls[0]?.headers[IDEMPOTENCY_KEY_HEADER]).toBeUndefined();
    });

    it('cancels with DELETE and its own Idempotency-Key', async () => {
      const { fetch, calls } = fakeFetch(inOrder(json(200, newTicket({ state: 'CANCELLED' }))));
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
      await expect(client.cancel('t/1')).resolves.toMatchObject({ state: 'CANCELLED' });
      expect(calls[0]).toMatchObject({ method: 'DELETE', path: 'queue/tickets/t%2F1' });
      expect(calls[0]?.headers[IDEMPOTENCY_KEY_HEADER]).toEqual(expect.any(String));
    });
  });

  describe('errors', () => {
    it('turns problem+json into a MatchplaneApiError with its code, detail and Retry-After', async () => {
      const { fetch } = fakeFetch(() =>
        problem(429, ErrorCode.COOLDOWN_ACTIVE, { 'retry-after': '7' }),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'mp_sess_secret' });
      const err = await rejection(client.enqueue('duel'));
      expect(err).toBeInstanceOf(MatchplaneApiError);
      expect(err).toMatchObject({
        status: 429,
        code: ErrorCode.COOLDOWN_ACTIVE,
        detail: 'because COOLDOWN_ACTIVE',
        retryAfterSeconds: 7,
        request: { method: 'POST', path: 'queue/tickets' },
      });
      expect(err.message).toBe(
        'POST queue/tickets failed: 429 COOLDOWN_ACTIVE: because COOLDOWN_ACTIVE',
      );
      expect(err.message).not.toContain('mp_sess_secret');
    });

    it('keeps the status of an error without a problem body (e.g. a proxy page)', async () => {
      const { fetch } = fakeFetch(
        () =>
          new Response('<html>bad gateway</html>', {
            status: 502,
            headers: { 'content-type': 'text/html' },
          }),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: 0 });
      await expect(client.queueOptions()).rejects.toMatchObject({ status: 502, code: undefined });
    });

    it('reports a request that outlives requestTimeoutMs as a timed-out MatchplaneNetworkError', async () => {
      const { fetch } = fakeFetch(
        (_call, init) =>
          new Promise<Response>((_resolve, reject) => {
            const signal = init.signal as AbortSignal;
            signal.addEventListener('abort', () => reject(signal.reason as Error));
          }),
      );
      const client = new PlayerClient({
        baseUrl: BASE_URL,
        fetch,
        requestTimeoutMs: 20,
        retries: 0,
      });
      const err = await rejection(client.queueOptions());
      expect(err).toBeInstanceOf(MatchplaneNetworkError);
      expect(err).toMatchObject({ timedOut: true, message: 'GET queue/options timed out' });
    });

    it('parses Retry-After as seconds or as an HTTP-date', () => {
      const now = new Date('2025-01-01T00:00:00.000Z');
      expect(parseRetryAfter('120', now)).toBe(120);
      expect(parseRetryAfter(' 0 ', now)).toBe(0);
      expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30);
      expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
      expect(parseRetryAfter('soon', now)).toBeUndefined();
      expect(parseRetryAfter('-5', now)).toBeUndefined();
      expect(parseRetryAfter(null, now)).toBeUndefined();
    });
  });

  describe('probes', () => {
    const probeServer = (failRegion?: string): Handler => {
      let sample = 0;
      return (call) => {
        if (call.path === 'queue/options') return json(200, queueOptions);
        const [, region, step] = call.path.split('/');
        if (region === failRegion) return problem(404, ErrorCode.UNKNOWN_REGION);
        if (step === 'challenge') {
          sample += 1;
          return json(201, {
            challengeId: `c-${sample}`,
            region,
            nonce: `n-${sample}`,
            issuedAt: '',
            expiresAt: '',
          });
        }
        const answer: ProbeAnswerResponse = {
          region: region ?? '',
          rttMs: sample,
          estimateMs: 2,
          samplesMs: [sample],
        };
        return json(200, answer);
      };
    };

    it('answers each challenge at once with its id and nonce and returns the last answer', async () => {
      const { fetch, calls } = fakeFetch(probeServer());
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'tok' });
      await expect(client.probe('eu-west')).resolves.toMatchObject({ region: 'eu-west', rttMs: 3 });
      expect(calls.map((c) => c.path)).toEqual([
        'probes/eu-west/challenge',
        'probes/eu-west/answer',
        'probes/eu-west/challenge',
        'probes/eu-west/answer',
        'probes/eu-west/challenge',
        'probes/eu-west/answer',
      ]);
      expect(calls[3]?.body).toEqual({ challengeId: 'c-2', nonce: 'n-2' });
      // An answer is never retried, so it needs no key; a challenge may be.
      expect(calls[1]?.headers[IDEMPOTENCY_KEY_HEADER]).toBeUndefined();
      expect(calls[0]?.headers[IDEMPOTENCY_KEY_HEADER]).toEqual(expect.any(String));
    });

    it('never retries a probe answer', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          json(201, {
            challengeId: 'c-1',
            region: 'eu-west',
            nonce: 'n-1',
            issuedAt: '',
            expiresAt: '',
          }),
          networkError(),
        ),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: fastRetries });
      await expect(client.probe('eu-west', { samples: 1 })).rejects.toBeInstanceOf(
        MatchplaneNetworkError,
      );
      expect(calls).toHaveLength(2);
    });

    it('probes every region of the queue options and reports the ones that failed', async () => {
      const { fetch, calls } = fakeFetch(probeServer('us-east'));
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
      const result = await client.probeAll(undefined, { samples: 1 });
      expect(Object.keys(result.measured)).toEqual(['eu-west']);
      expect(result.failed['us-east']).toMatchObject({ code: ErrorCode.UNKNOWN_REGION });
      expect(calls[0]?.path).toBe('queue/options');
    });
  });

  describe('heartbeats', () => {
    it('beats until the server answers 409 TICKET_FINISHED, then stops by itself', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          json(200, newTicket()),
          json(200, newTicket({ state: 'MATCHED' })),
          problem(409, ErrorCode.TICKET_FINISHED),
        ),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'tok' });
      const handle = client.startHeartbeats('t-1', { intervalMs: 5 });

      const stopped: HeartbeatStopReason = await handle.done;
      expect(stopped).toMatchObject({
        reason: 'finished',
        error: { code: ErrorCode.TICKET_FINISHED },
      });
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(calls).toHaveLength(3);
      expect(
        calls.every((c) => c.method === 'POST' && c.path === 'queue/tickets/t-1/heartbeat'),
      ).toBe(true);
      expect(new Set(calls.map((c) => c.headers[IDEMPOTENCY_KEY_HEADER])).size).toBe(3);
    });

    it('stops when the ticket leaves the heartbeat states, at the interval of the queue options', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          json(200, queueOptions),
          json(200, newTicket()),
          json(200, newTicket({ state: 'ASSIGNED' })),
        ),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
      const stopped = await client.startHeartbeats('t-1').done;
      expect(stopped).toMatchObject({ reason: 'left-queue', ticket: { state: 'ASSIGNED' } });
      expect(calls.map((c) => c.path)).toEqual([
        'queue/options',
        'queue/tickets/t-1/heartbeat',
        'queue/tickets/t-1/heartbeat',
      ]);
    });

    it('reports a failed beat to onError and keeps beating until stopped', async () => {
      let beats = 0;
      const { fetch } = fakeFetch(() => {
        beats += 1;
        return beats === 1
          ? problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE)
          : json(200, newTicket());
      });
      const errors: unknown[] = [];
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: 0 });
      const handle = client.startHeartbeats('t-1', {
        intervalMs: 2,
        onError: (error) => {
          errors.push(error);
          throw new Error('a careless callback');
        },
      });
      while (beats < 3) await new Promise((resolve) => setTimeout(resolve, 2));
      handle.stop();
      handle.stop();
      await expect(handle.done).resolves.toEqual({ reason: 'stopped' });
      const afterStop = beats;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(beats).toBeLessThanOrEqual(afterStop + 1); // at most the beat already in flight
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ status: 503 });
    });
  });

  describe('waitForTicket', () => {
    it('polls until the predicate holds', async () => {
      const { fetch, calls } = fakeFetch(
        inOrder(
          json(200, newTicket()),
          json(200, newTicket()),
          json(200, newTicket({ state: 'MATCHED' })),
        ),
      );
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
      await expect(
        client.waitForTicket('t-1', (t) => t.state === 'MATCHED', { pollMs: 1 }),
      ).resolves.toMatchObject({ state: 'MATCHED' });
      expect(calls).toHaveLength(3);
    });

    it('gives up after timeoutMs with the last ticket seen', async () => {
      const { fetch } = fakeFetch(() => json(200, newTicket()));
      const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
      const err = await rejection(
        client.waitForTicket('t-1', (t) => t.state === 'MATCHED', { timeoutMs: 20, pollMs: 5 }),
      );
      expect(err).toBeInstanceOf(TicketWaitTimeoutError);
      expect((err as TicketWaitTimeoutError).lastTicket.state).toBe('SEARCHING');
    });
  });

  describe('with the global fetch over real HTTP', () => {
    let server: Server;
    let baseUrl: string;
    const seen: IncomingMessage[] = [];

    beforeAll(async () => {
      server = createServer((req, res) => {
        seen.push(req);
        if (req.url === '/v1/queue/options') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify(queueOptions));
        } else if (req.url === '/v1/queue/tickets/slow') {
          setTimeout(() => res.writeHead(200).end('{}'), 500);
        } else {
          res
            .writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '3' })
            .end(
              JSON.stringify({
                type: 'about:blank',
                title: 'Too Many Requests',
                status: 429,
                code: 'COOLDOWN_ACTIVE',
              }),
            );
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('sends the token and key headers, parses bodies, problems and timeouts', async () => {
      const client = new PlayerClient({ baseUrl, token: 'tok', requestTimeoutMs: 100, retries: 0 });
      await expect(client.queueOptions()).resolves.toEqual(queueOptions);
      await expect(client.enqueue('duel')).rejects.toMatchObject({
        status: 429,
        code: ErrorCode.COOLDOWN_ACTIVE,
        retryAfterSeconds: 3,
      });
      await expect(client.ticket('slow')).rejects.toMatchObject({
        name: 'MatchplaneNetworkError',
        timedOut: true,
      });
      expect(seen[0]?.headers.authorization).toBe('Bearer tok');
      expect(seen[1]?.headers[IDEMPOTENCY_KEY_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[1]?.headers['content-type']).toBe('application/json');
    });
  });
});

describe(`${PlayerClient.name} parties`, () => {
  const session: SessionResponse = {
    token: 'tok',
    expiresAt: '2026-01-01T00:00:00.000Z',
    playerId: 'p-2',
  };
  const party = (ticketId?: string) => ({
    partyId: 'party-1',
    leaderId: 'p-1',
    maxSize: 4,
    inviteExpiresAt: '2026-01-01T00:00:00.000Z',
    members: [
      { playerId: 'p-1', joinedAt: '', probed: true, regionsMeasured: ['eu'] },
      {
        playerId: 'p-2',
        joinedAt: '',
        probed: true,
        regionsMeasured: ['eu'],
        ...(ticketId ? { ticketId } : {}),
      },
    ],
  });

  it('calls the party routes, and queues the party with an Idempotency-Key', async () => {
    const { fetch, calls } = fakeFetch(
      inOrder(
        json(201, { ...party(), inviteCode: 'mpi_x' }),
        json(200, party()),
        json(200, party()),
        json(201, { partyTicketId: 'pt-1', partyId: 'party-1', mode: 'pair', tickets: [] }),
        new Response(null, { status: 204 }),
        new Response(null, { status: 204 }),
      ),
    );
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch, token: 'tok', retries: 0 });
    await expect(client.createParty()).resolves.toMatchObject({ inviteCode: 'mpi_x' });
    await client.joinParty('mpi_x');
    await client.party();
    const memberRoles = { 'member-1': ['healer'] };
    await expect(client.enqueueParty('pair', { memberRoles })).resolves.toMatchObject({
      partyTicketId: 'pt-1',
    });
    await client.leaveParty();
    await client.disbandParty();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST parties',
      'POST parties/join',
      'GET parties/current',
      'POST queue/party-tickets',
      'POST parties/current/leave',
      'DELETE parties/current',
    ]);
    expect(calls[1]?.body).toEqual({ inviteCode: 'mpi_x' });
    expect(calls[3]?.body).toEqual({ mode: 'pair', memberRoles });
    expect(calls[3]?.headers[IDEMPOTENCY_KEY_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("waits for this member's own ticket of the party ticket", async () => {
    const { fetch, calls } = fakeFetch(
      inOrder(json(201, session), json(200, party()), json(200, party('t-9'))),
    );
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: 0 });
    await client.createSession();
    await expect(client.waitForPartyTicket({ pollMs: 1, timeoutMs: 1_000 })).resolves.toBe('t-9');
    expect(calls).toHaveLength(3);
  });
});

describe(`${PlayerClient.name} lobbies`, () => {
  const lobby = (overrides: Partial<LobbyResponse> = {}): LobbyResponse => ({
    lobbyId: 'l-1',
    ownerId: 'p-1',
    mode: 'duel',
    size: 2,
    teamCount: 2,
    teamSize: 1,
    teamSizes: [1, 1],
    ranked: false,
    state: 'OPEN',
    members: [{ playerId: 'p-1', joinedAt: '2025-01-01T00:00:00.000Z' }],
    expiresAt: '2025-01-01T00:30:00.000Z',
    ...overrides,
  });

  it('calls every lobby route; create retries with one Idempotency-Key', async () => {
    const { fetch, calls } = fakeFetch(
      inOrder(
        networkError(),
        json(201, lobby({ inviteCode: 'mpl_x' })),
        json(200, lobby()),
        json(200, lobby()),
        json(200, lobby()),
        json(200, lobby()),
        new Response(null, { status: 204 }),
        json(200, lobby({ state: 'STARTED', matchId: 'm-1' })),
      ),
    );
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: fastRetries });
    await expect(client.lobbies.create({ mode: 'duel', ranked: true })).resolves.toMatchObject({
      inviteCode: 'mpl_x',
    });
    await client.lobbies.join('mpl_x');
    await client.lobbies.current();
    await client.lobbies.kick('p-2');
    await client.lobbies.setTeams([['p-1'], ['p-3']]);
    await client.lobbies.leave();
    await expect(client.lobbies.start()).resolves.toMatchObject({ state: 'STARTED' });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST lobbies',
      'POST lobbies',
      'POST lobbies/join',
      'GET lobbies/current',
      'POST lobbies/current/kick',
      'POST lobbies/current/teams',
      'POST lobbies/current/leave',
      'POST lobbies/current/start',
    ]);
    const [first, retry] = calls;
    expect(first?.headers[IDEMPOTENCY_KEY_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry?.headers[IDEMPOTENCY_KEY_HEADER]).toBe(first?.headers[IDEMPOTENCY_KEY_HEADER]);
    expect(first?.body).toEqual({ mode: 'duel', ranked: true });
    expect(calls[2]?.body).toEqual({ inviteCode: 'mpl_x' });
    expect(calls[4]?.body).toEqual({ playerId: 'p-2' });
    expect(calls[5]?.body).toEqual({ teams: [['p-1'], ['p-3']] });
  });

  it('sends a start once: an unanswered start may have started the lobby', async () => {
    const { fetch, calls } = fakeFetch(inOrder(networkError()));
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: fastRetries });
    expect(await rejection(client.lobbies.start())).toBeInstanceOf(MatchplaneNetworkError);
    expect(calls).toHaveLength(1);
  });

  it("waits for the owner's start and answers this member's own ticket", async () => {
    const started = lobby({
      state: 'STARTED',
      matchId: 'm-1',
      members: [
        { playerId: 'p-0', joinedAt: '2025-01-01T00:00:00.000Z', team: 0, ticketId: 't-0' },
        { playerId: 'p-1', joinedAt: '2025-01-01T00:00:00.000Z', team: 1, ticketId: 't-9' },
      ],
    });
    const { fetch, calls } = fakeFetch(
      inOrder(json(201, session), json(200, lobby()), json(200, started)),
    );
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch, retries: 0 });
    await client.createSession();
    await expect(client.lobbies.waitForStart({ pollMs: 1, timeoutMs: 1_000 })).resolves.toBe('t-9');
    expect(calls).toHaveLength(3);
  });
});
