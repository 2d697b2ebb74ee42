import {
  ErrorCode,
  IDEMPOTENCY_KEY_HEADER,
  SERVER_PROTOCOL_VERSION,
  type BackfillConnectResponse,
  type BackfillResponse,
  type InitialConnectResponse,
  type MatchResultResponse,
  type RegisterServerResponse,
  type RosterResponse,
} from '@matchplane/contracts';
import { type FetchLike } from './http.transport';
import { MatchplaneApiError, MatchplaneNetworkError } from './sdk.errors';
import { ServerClient } from './server-client';

const BASE_URL = 'http://mm.test:8080';
const SERVER_ID = 'gs/eu-west 1';
const CREDENTIAL = 'mp_srv_workload_secret';
const MATCH_ID = '11111111-1111-4111-8111-111111111111';

interface RecordedCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A fetch double that records every call and answers the replies in order; an Error is a network failure. */
function fakeFetch(...replies: (Response | Error)[]): { fetch: FetchLike; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const fetch: FetchLike = (url, init) => {
    calls.push({
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const reply = replies.shift();
    if (reply === undefined) return Promise.reject(new Error('unexpected extra call'));
    if (reply instanceof Error) return Promise.reject(reply);
    return Promise.resolve(reply);
  };
  return { fetch, calls };
}

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const problem = (status: number, code: ErrorCode): Response =>
  new Response(
    JSON.stringify({ type: 'about:blank', title: 'Problem', status, code, detail: code }),
    {
      status,
      headers: { 'content-type': 'application/problem+json' },
    },
  );

const networkError = (): Error => new TypeError('fetch failed');

function newClient(fetch: FetchLike, retries = 2): ServerClient {
  return new ServerClient({
    baseUrl: BASE_URL,
    serverId: SERVER_ID,
    credential: CREDENTIAL,
    fetch,
    retries: { retries, baseDelayMs: 1, maxDelayMs: 2 },
  });
}

const registered: RegisterServerResponse = {
  matchId: MATCH_ID,
  serverId: SERVER_ID,
  state: 'ASSIGNMENT_READY',
  revision: 3,
};

const roster: RosterResponse = {
  matchId: MATCH_ID,
  serverId: SERVER_ID,
  endpoint: '127.0.0.1:7777',
  mode: 'duel',
  region: 'eu-west',
  revision: 1,
  entries: [
    {
      playerId: '22222222-2222-4222-8222-222222222222',
      team: 0,
      joinToken: 'claims.mac',
      expiresAt: '2026-01-01T00:05:00.000Z',
    },
  ],
  manifest: {
    matchId: MATCH_ID,
    serverId: SERVER_ID,
    keyId: 'k1',
    digest: 'ab'.repeat(32),
    entryCount: 1,
    issuedAt: 1_767_225_600_000,
    revision: 1,
    signature: 'sig',
  },
};

const encodedServer = encodeURIComponent(SERVER_ID);

describe(ServerClient.name, () => {
  it('calls each server route under /v1 with the workload credential and the contract bodies', async () => {
    const connected: InitialConnectResponse = {
      matchId: MATCH_ID,
      state: 'IN_PROGRESS',
      revision: 4,
      noShowPlayerIds: [],
    };
    const ended: MatchResultResponse = { matchId: MATCH_ID, state: 'COMPLETED', revision: 5 };
    const { fetch, calls } = fakeFetch(
      json(200, roster),
      json(200, registered),
      json(200, connected),
      json(200, ended),
    );
    const client = newClient(fetch);

    await expect(client.roster()).resolves.toEqual(roster);
    await expect(client.register(SERVER_PROTOCOL_VERSION, 'sha256:abc')).resolves.toEqual(
      registered,
    );
    const playerIds = ['22222222-2222-4222-8222-222222222222'];
    await expect(client.initialConnect(playerIds)).resolves.toEqual(connected);
    await expect(
      client.result({ outcome: 'COMPLETED', winningTeam: 0, scores: { [playerIds[0]!]: 3 } }),
    ).resolves.toEqual(ended);

    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `GET ${BASE_URL}/v1/servers/${encodedServer}/roster`,
      `POST ${BASE_URL}/v1/servers/${encodedServer}/register`,
      `POST ${BASE_URL}/v1/servers/${encodedServer}/initial-connect`,
      `POST ${BASE_URL}/v1/servers/${encodedServer}/result`,
    ]);
    expect(calls.every((c) => c.headers.authorization === `Bearer ${CREDENTIAL}`)).toBe(true);
    expect(calls.map((c) => c.body)).toEqual([
      undefined,
      { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:abc' },
      { connectedPlayerIds: playerIds },
      { outcome: 'COMPLETED', winningTeam: 0, scores: { [playerIds[0]!]: 3 } },
    ]);
  });

  describe('backfill', () => {
    const REQUEST_ID = 'bf/1 2';
    const encodedRequest = encodeURIComponent(REQUEST_ID);
    const ADDED = '33333333-3333-4333-8333-333333333333';
    const backfill = (state: BackfillResponse['state']): BackfillResponse => ({
      requestId: REQUEST_ID,
      matchId: MATCH_ID,
      team: 1,
      slots: 1,
      state,
      expiresAt: '2026-01-01T00:00:30.000Z',
      playerIds: state === 'OPEN' ? [] : [ADDED],
      ...(state === 'OPEN' ? {} : { rosterRevision: 2 }),
      revision: 1,
    });

    it('calls each backfill route under /v1 with the workload credential and the contract bodies', async () => {
      const filled: BackfillConnectResponse = { ...backfill('FILLED'), noShowPlayerIds: [] };
      const { fetch, calls } = fakeFetch(
        json(201, backfill('OPEN')),
        json(200, backfill('PUBLISHED')),
        json(200, backfill('ASSIGNED')),
        json(200, filled),
        json(200, { ...backfill('CANCELLED'), reason: 'SERVER_CANCELLED' }),
      );
      const client = newClient(fetch);

      await expect(
        client.requestBackfill({ team: 1, slots: 1, timeoutSeconds: 30 }),
      ).resolves.toEqual(backfill('OPEN'));
      await expect(client.backfill(REQUEST_ID)).resolves.toEqual(backfill('PUBLISHED'));
      await expect(client.acceptBackfill(REQUEST_ID, 2)).resolves.toEqual(backfill('ASSIGNED'));
      await expect(client.reportBackfillConnect(REQUEST_ID, [ADDED])).resolves.toEqual(filled);
      await expect(client.cancelBackfill(REQUEST_ID)).resolves.toMatchObject({
        state: 'CANCELLED',
        reason: 'SERVER_CANCELLED',
      });

      const backfills = `${BASE_URL}/v1/servers/${encodedServer}/backfills`;
      expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
        `POST ${backfills}`,
        `GET ${backfills}/${encodedRequest}`,
        `POST ${backfills}/${encodedRequest}/accept`,
        `POST ${backfills}/${encodedRequest}/connect`,
        `DELETE ${backfills}/${encodedRequest}`,
      ]);
      expect(calls.every((c) => c.headers.authorization === `Bearer ${CREDENTIAL}`)).toBe(true);
      expect(calls.map((c) => c.body)).toEqual([
        { team: 1, slots: 1, timeoutSeconds: 30 },
        undefined,
        { rosterRevision: 2 },
        { connectedPlayerIds: [ADDED] },
        undefined,
      ]);
    });

    it('retries a backfill request as it is, without an Idempotency-Key the route would ignore', async () => {
      // The API answers a repeat of the same request, still OPEN, with the one it opened.
      const { fetch, calls } = fakeFetch(
        networkError(),
        problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE),
        json(200, backfill('OPEN')),
      );
      await expect(newClient(fetch).requestBackfill({ team: 1, slots: 1 })).resolves.toEqual(
        backfill('OPEN'),
      );
      expect(calls).toHaveLength(3);
      expect(calls.every((c) => c.headers[IDEMPOTENCY_KEY_HEADER] === undefined)).toBe(true);
      expect(new Set(calls.map((c) => JSON.stringify(c.body))).size).toBe(1);
    });

    it('throws the refusal of a backfill step as a typed MatchplaneApiError', async () => {
      const { fetch, calls } = fakeFetch(problem(409, ErrorCode.BACKFILL_CONFLICT));
      await expect(newClient(fetch).cancelBackfill(REQUEST_ID)).rejects.toMatchObject({
        status: 409,
        code: ErrorCode.BACKFILL_CONFLICT,
        request: { method: 'DELETE', path: `servers/${encodedServer}/backfills/${encodedRequest}` },
      });
      expect(calls).toHaveLength(1);
    });
  });

  it('retries network errors and 5xx without an Idempotency-Key, since the routes are idempotent', async () => {
    const { fetch, calls } = fakeFetch(
      networkError(),
      problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE),
      json(200, registered),
    );
    await expect(newClient(fetch).register(1, 'sha256:abc')).resolves.toEqual(registered);
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.headers[IDEMPOTENCY_KEY_HEADER] === undefined)).toBe(true);
    expect(new Set(calls.map((c) => JSON.stringify(c.body))).size).toBe(1);
  });

  it('throws a typed MatchplaneApiError on problem+json without retrying a 4xx', async () => {
    const { fetch, calls } = fakeFetch(problem(403, ErrorCode.FORBIDDEN));
    const error = await newClient(fetch)
      .initialConnect([])
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(MatchplaneApiError);
    expect(error).toMatchObject({
      status: 403,
      code: ErrorCode.FORBIDDEN,
      request: { method: 'POST', path: `servers/${encodedServer}/initial-connect` },
    });
    expect((error as Error).message).not.toContain(CREDENTIAL);
    expect(calls).toHaveLength(1);
  });

  it('gives up after the configured retries with the last failure', async () => {
    const { fetch, calls } = fakeFetch(networkError(), networkError());
    const error = await newClient(fetch, 1)
      .roster()
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(MatchplaneNetworkError);
    expect(calls).toHaveLength(2);
  });

  describe('a result whose answer was lost', () => {
    const report = { outcome: 'COMPLETED' as const, winningTeam: 0 };

    it('is already recorded when a retry meets 401 ALLOCATION_ENDED', async () => {
      const { fetch, calls } = fakeFetch(networkError(), problem(401, ErrorCode.ALLOCATION_ENDED));
      await expect(newClient(fetch).result(report)).resolves.toEqual({ alreadyRecorded: true });
      expect(calls).toHaveLength(2);
    });

    it('is already recorded when a later call meets ALLOCATION_ENDED after one that got no answer', async () => {
      const { fetch } = fakeFetch(
        networkError(),
        networkError(),
        problem(401, ErrorCode.ALLOCATION_ENDED),
      );
      const client = newClient(fetch, 1);
      await expect(client.result(report)).rejects.toBeInstanceOf(MatchplaneNetworkError);
      await expect(client.result(report)).resolves.toEqual({ alreadyRecorded: true });
    });

    it('is not: ALLOCATION_ENDED with every attempt answered means the match ended without it', async () => {
      const { fetch } = fakeFetch(problem(401, ErrorCode.ALLOCATION_ENDED));
      await expect(newClient(fetch).result(report)).rejects.toMatchObject({
        status: 401,
        code: ErrorCode.ALLOCATION_ENDED,
      });
    });
  });

  it('refuses an empty success body as a contract violation', async () => {
    const { fetch } = fakeFetch(new Response(null, { status: 204 }));
    await expect(newClient(fetch).result({ outcome: 'FAILED' })).rejects.toThrow(
      /answered without a body/,
    );
  });

  describe('heartbeats', () => {
    const beat = () => json(200, { matchId: MATCH_ID, serverId: SERVER_ID });
    const waitUntil = async (done: () => boolean) => {
      for (let i = 0; i < 200 && !done(); i += 1) await new Promise((r) => setTimeout(r, 5));
    };

    it('sends one heartbeat with the credential, never retried (the next beat is the retry)', async () => {
      const { fetch, calls } = fakeFetch(networkError(), beat());
      await expect(newClient(fetch).heartbeat()).rejects.toBeInstanceOf(MatchplaneNetworkError);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({
        method: 'POST',
        url: `${BASE_URL}/v1/servers/${encodeURIComponent(SERVER_ID)}/heartbeat`,
        body: undefined,
      });
      expect(calls[0]?.headers.authorization).toBe(`Bearer ${CREDENTIAL}`);
    });

    it('beats at once and then every interval by itself, through failures, until stopped', async () => {
      const errors: unknown[] = [];
      const { fetch, calls } = fakeFetch(
        beat(),
        problem(503, ErrorCode.DEPENDENCY_UNAVAILABLE),
        beat(),
        beat(),
      );
      const handle = newClient(fetch, 0).startHeartbeats({
        intervalMs: 10,
        onError: (error) => errors.push(error),
      });
      await waitUntil(() => calls.length >= 4);
      handle.stop();
      await expect(handle.done).resolves.toEqual({ reason: 'stopped' });
      expect(calls.length).toBe(4);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(MatchplaneApiError);
    });

    it('ends by itself once the allocation ended (401 ALLOCATION_ENDED)', async () => {
      const { fetch, calls } = fakeFetch(beat(), problem(401, ErrorCode.ALLOCATION_ENDED));
      const handle = newClient(fetch).startHeartbeats({ intervalMs: 5 });
      const stop = await handle.done;
      expect(stop.reason).toBe('ended');
      expect(calls).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 30));
      expect(calls).toHaveLength(2);
    });

    it('refuses an interval that is not a positive number', () => {
      const { fetch } = fakeFetch();
      expect(() => newClient(fetch).startHeartbeats({ intervalMs: 0 })).toThrow(RangeError);
    });
  });

  it('refuses to be built without a server id or credential', () => {
    expect(
      () => new ServerClient({ baseUrl: BASE_URL, serverId: '', credential: CREDENTIAL }),
    ).toThrow(/serverId/);
    expect(
      () => new ServerClient({ baseUrl: BASE_URL, serverId: SERVER_ID, credential: '' }),
    ).toThrow(/credential/);
  });
});
