import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ProbeChallengeResponse, TicketResponse } from '@matchplane/contracts';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** Row counts of every table in the database (found from the catalog, never listed by hand). */
async function tableCounts(ds: DataSource): Promise<Record<string, number>> {
  const tables = await ds.query<{ tablename: string }[]>(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const counts: Record<string, number> = {};
  for (const { tablename } of tables) {
    const [row] = await ds.query<{ n: string }[]>(`SELECT count(*) AS n FROM "${tablename}"`);
    counts[tablename] = Number(row?.n);
  }
  return counts;
}

type Method = 'GET' | 'POST' | 'DELETE';
interface BadCase {
  name: string;
  method: Method;
  url: string;
  status: number;
  code: string;
  auth?: boolean;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string | null;
}

/*
 * Every player route with each kind of bad input: a 4xx problem+json with its stable code, and
 * not one row written anywhere.
 */
describe('player routes refuse bad input and write nothing', () => {
  let api: PlayerApi;
  let token: string;
  let ticket: TicketResponse;
  let challenge: ProbeChallengeResponse;

  beforeAll(async () => {
    api = await startPlayerApi();
    const player = await api.newPlayer();
    token = player.token;
    await api.probe(token, 'eu-west');
    ticket = (await api.enqueue(token, 'duel')).json<TicketResponse>();
    challenge = (
      await api.request('POST', '/v1/probes/eu-west/challenge', { token })
    ).json<ProbeChallengeResponse>();
  });
  afterAll(() => api.close());

  const big = 'x'.repeat(70 * 1024);
  const cases = (): BadCase[] => {
    const t = `/v1/queue/tickets/${ticket.id}`;
    const answer = '/v1/probes/eu-west/answer';
    return [
      // sessions
      {
        name: 'sessions: malformed JSON',
        method: 'POST',
        url: '/v1/sessions',
        rawBody: '{"provider":',
        status: 400,
        code: 'MALFORMED_JSON',
        auth: false,
      },
      {
        name: 'sessions: wrong type',
        method: 'POST',
        url: '/v1/sessions',
        body: { credential: 42 },
        status: 400,
        code: 'VALIDATION_FAILED',
        auth: false,
      },
      {
        name: 'sessions: unknown field',
        method: 'POST',
        url: '/v1/sessions',
        body: { admin: true },
        status: 400,
        code: 'VALIDATION_FAILED',
        auth: false,
      },
      {
        name: 'sessions: oversized body',
        method: 'POST',
        url: '/v1/sessions',
        body: { credential: big },
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        auth: false,
      },
      {
        name: 'sessions: unknown provider',
        method: 'POST',
        url: '/v1/sessions',
        body: { provider: 'myspace' },
        status: 400,
        code: 'UNKNOWN_IDENTITY_PROVIDER',
        auth: false,
      },
      {
        name: 'sessions: forged device secret',
        method: 'POST',
        url: '/v1/sessions',
        body: { credential: `mpd_${'A'.repeat(43)}` },
        status: 401,
        code: 'INVALID_CREDENTIAL',
        auth: false,
      },
      {
        name: 'sessions: not a device secret',
        method: 'POST',
        url: '/v1/sessions',
        body: { credential: 'hunter2' },
        status: 401,
        code: 'INVALID_CREDENTIAL',
        auth: false,
      },
      {
        name: 'revoke: no token',
        method: 'DELETE',
        url: '/v1/sessions/current',
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      {
        name: 'revoke: bogus token',
        method: 'DELETE',
        url: '/v1/sessions/current',
        headers: { authorization: `Bearer mps_${'B'.repeat(43)}` },
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      // probes
      {
        name: 'challenge: no token',
        method: 'POST',
        url: '/v1/probes/eu-west/challenge',
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      {
        name: 'challenge: unknown region',
        method: 'POST',
        url: '/v1/probes/atlantis/challenge',
        status: 404,
        code: 'UNKNOWN_REGION',
      },
      {
        name: 'answer: malformed JSON',
        method: 'POST',
        url: answer,
        rawBody: '{',
        status: 400,
        code: 'MALFORMED_JSON',
      },
      {
        name: 'answer: bad challenge uuid',
        method: 'POST',
        url: answer,
        body: { challengeId: 'nope', nonce: 'abc' },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'answer: wrong nonce type',
        method: 'POST',
        url: answer,
        body: { challengeId: randomUUID(), nonce: 7 },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'answer: unknown field',
        method: 'POST',
        url: answer,
        body: { challengeId: randomUUID(), nonce: 'abc', rttMs: 1 },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'answer: missing body',
        method: 'POST',
        url: answer,
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'answer: unknown challenge',
        method: 'POST',
        url: answer,
        body: { challengeId: randomUUID(), nonce: 'abc' },
        status: 404,
        code: 'PROBE_CHALLENGE_NOT_FOUND',
      },
      {
        name: 'answer: wrong nonce',
        method: 'POST',
        url: answer,
        body: { challengeId: challenge.challengeId, nonce: 'not-the-nonce' },
        status: 403,
        code: 'PROBE_NONCE_MISMATCH',
      },
      {
        name: 'answer: wrong region',
        method: 'POST',
        url: '/v1/probes/us-east/answer',
        body: { challengeId: challenge.challengeId, nonce: challenge.nonce },
        status: 409,
        code: 'PROBE_WRONG_REGION',
      },
      {
        name: 'answer: oversized body',
        method: 'POST',
        url: answer,
        body: { challengeId: challenge.challengeId, nonce: big },
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      },
      {
        name: 'answer: text body',
        method: 'POST',
        url: answer,
        rawBody: 'hello',
        headers: { 'content-type': 'text/plain' },
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
      {
        // Form bodies are parsed for the operator console's pages only.
        name: 'answer: form body',
        method: 'POST',
        url: answer,
        rawBody: `challengeId=${challenge.challengeId}&nonce=x`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
      // queue
      {
        name: 'options: no token',
        method: 'GET',
        url: '/v1/queue/options',
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      {
        name: 'create: no idempotency key',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: 'duel' },
        idempotencyKey: null,
        status: 400,
        code: 'IDEMPOTENCY_KEY_REQUIRED',
      },
      {
        name: 'create: bad idempotency key',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: 'duel' },
        idempotencyKey: 'has space',
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'create: malformed JSON',
        method: 'POST',
        url: '/v1/queue/tickets',
        rawBody: '{"mode"',
        status: 400,
        code: 'MALFORMED_JSON',
      },
      {
        name: 'create: wrong type',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: ['duel'] },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'create: unknown field',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: 'duel', rating: 3000 },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'create: missing mode',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: {},
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'create: oversized body',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: big },
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      },
      {
        name: 'create: no token',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: 'duel' },
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      {
        name: 'create: live ticket exists',
        method: 'POST',
        url: '/v1/queue/tickets',
        body: { mode: 'duel' },
        status: 409,
        code: 'TICKET_ALREADY_LIVE',
      },
      {
        name: 'get: bad uuid',
        method: 'GET',
        url: '/v1/queue/tickets/123',
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'get: unknown ticket',
        method: 'GET',
        url: `/v1/queue/tickets/${randomUUID()}`,
        status: 404,
        code: 'TICKET_NOT_FOUND',
      },
      {
        name: 'heartbeat: no idempotency key',
        method: 'POST',
        url: `${t}/heartbeat`,
        idempotencyKey: null,
        status: 400,
        code: 'IDEMPOTENCY_KEY_REQUIRED',
      },
      {
        name: 'heartbeat: bad uuid',
        method: 'POST',
        url: '/v1/queue/tickets/zzz/heartbeat',
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'heartbeat: unknown ticket',
        method: 'POST',
        url: `/v1/queue/tickets/${randomUUID()}/heartbeat`,
        status: 404,
        code: 'TICKET_NOT_FOUND',
      },
      {
        name: 'heartbeat: no token',
        method: 'POST',
        url: `${t}/heartbeat`,
        status: 401,
        code: 'UNAUTHENTICATED',
        auth: false,
      },
      {
        name: 'cancel: no idempotency key',
        method: 'DELETE',
        url: t,
        idempotencyKey: null,
        status: 400,
        code: 'IDEMPOTENCY_KEY_REQUIRED',
      },
      {
        name: 'cancel: bad uuid',
        method: 'DELETE',
        url: '/v1/queue/tickets/not-a-uuid',
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        name: 'cancel: unknown ticket',
        method: 'DELETE',
        url: `/v1/queue/tickets/${randomUUID()}`,
        status: 404,
        code: 'TICKET_NOT_FOUND',
      },
      {
        name: 'unknown route',
        method: 'GET',
        url: '/v1/queue/nowhere',
        status: 404,
        code: 'NOT_FOUND',
      },
    ];
  };

  it('answers every case with its 4xx problem+json and leaves every table unchanged', async () => {
    const outcomes: string[] = [];
    for (const badCase of cases()) {
      const before = await tableCounts(api.ds);
      const response = await api.request(badCase.method, badCase.url, {
        ...(badCase.auth === false ? {} : { token }),
        ...(badCase.body !== undefined ? { body: badCase.body } : {}),
        ...(badCase.rawBody !== undefined ? { rawBody: badCase.rawBody } : {}),
        ...(badCase.headers ? { headers: badCase.headers } : {}),
        ...(badCase.idempotencyKey === null
          ? {}
          : { idempotencyKey: badCase.idempotencyKey ?? randomUUID() }),
      });
      const after = await tableCounts(api.ds);
      const problem = response.headers['content-type']
        ?.toString()
        .startsWith('application/problem+json')
        ? response.json<{ code?: string }>()
        : {};
      outcomes.push(
        `${badCase.name}: ${response.statusCode} ${problem.code ?? response.body.slice(0, 80)}${JSON.stringify(after) === JSON.stringify(before) ? '' : ' WROTE ROWS'}`,
      );
    }
    expect(outcomes).toEqual(cases().map((c) => `${c.name}: ${c.status} ${c.code}`));
  });

  it('a refused probe answer leaves the challenge answerable', async () => {
    const retry = await api.request('POST', '/v1/probes/eu-west/answer', {
      token,
      body: { challengeId: challenge.challengeId, nonce: challenge.nonce },
    });
    expect(retry.statusCode).toBe(200);
    const reused = await api.request('POST', '/v1/probes/eu-west/answer', {
      token,
      body: { challengeId: challenge.challengeId, nonce: challenge.nonce },
    });
    expect([reused.statusCode, reused.json().code]).toEqual([409, 'PROBE_ALREADY_ANSWERED']);
  });
});
