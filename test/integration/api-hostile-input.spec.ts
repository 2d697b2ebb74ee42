import { randomUUID } from 'node:crypto';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { SessionResponse } from '@matchplane/contracts';
import { startPlayerApi, type InjectedResponse, type PlayerApi } from '../support/player-api';

const OPERATOR_TOKEN = 'ops-token-0123456789abcdefghijklmnopqrstuv';
const LEVELS = 3_000;

/** `[[[…]]]` or `{"a":{"a":…}}` nested `levels` deep: a few KB. */
function nested(kind: 'array' | 'object', levels: number): string {
  return kind === 'array'
    ? `${'['.repeat(levels)}${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

function problemOf(response: InjectedResponse): string {
  const type = String(response.headers['content-type'] ?? '');
  const code = type.startsWith('application/problem+json')
    ? response.json<{ code?: string }>().code
    : `not problem+json: ${type} ${response.body.slice(0, 80)}`;
  return `${response.statusCode} ${code}`;
}

/*
 * What an attacker-style test of the running stack found: inputs that made the API answer 500 (or
 * Fastify's own JSON instead of problem+json). Each must be a 4xx problem+json with a stable code.
 */
describe('the API refuses hostile input with problem+json, never a 500', () => {
  let api: PlayerApi;
  let player: SessionResponse;
  let postPaths: string[];

  beforeAll(async () => {
    api = await startPlayerApi({ OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}` });
    player = await api.newPlayer();
    const document = SwaggerModule.createDocument(api.app, new DocumentBuilder().build());
    postPaths = Object.entries(document.paths)
      .filter(([, operations]) => operations.post !== undefined)
      .map(([path]) => path.replace(/\{region\}/g, 'eu-west').replace(/\{[^}]+\}/g, '1'));
  });
  afterAll(() => api.close());

  /** The credential each route family takes (server routes are refused before their guard). */
  const tokenFor = (path: string): string | undefined =>
    path.includes('/admin/')
      ? OPERATOR_TOKEN
      : path.includes('/servers/')
        ? undefined
        : player.token;

  it.each(['array', 'object'] as const)(
    'answers a body of %ss nested thousands deep with 400 JSON_TOO_DEEP on every POST route',
    async (kind) => {
      expect(postPaths.length).toBeGreaterThan(10);
      const outcomes: string[] = [];
      for (const path of postPaths) {
        const token = tokenFor(path);
        const response = await api.request('POST', path, {
          ...(token ? { token } : {}),
          rawBody: `{"reason":"x","field":${nested(kind, LEVELS)}}`,
          idempotencyKey: randomUUID(),
        });
        outcomes.push(`${path}: ${problemOf(response)}`);
      }
      expect(outcomes).toEqual(postPaths.map((path) => `${path}: 400 JSON_TOO_DEEP`));
    },
  );

  it('names the limit and still accepts a body nested within it', async () => {
    const deep = await api.request('POST', '/v1/sessions', {
      rawBody: `{"credential":${nested('array', api.config.API_JSON_MAX_DEPTH)}}`,
    });
    expect(deep.json()).toMatchObject({ status: 400, code: 'JSON_TOO_DEEP' });
    expect(deep.json<{ detail: string }>().detail).toContain(String(api.config.API_JSON_MAX_DEPTH));
    // One level less is parsed, and refused by validation like any other wrong type.
    const within = await api.request('POST', '/v1/sessions', {
      rawBody: `{"credential":${nested('array', api.config.API_JSON_MAX_DEPTH - 1)}}`,
    });
    expect(within.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  describe('the NUL character, which PostgreSQL refuses in text and jsonb', () => {
    it.each([
      ['a query parameter', 'GET', '/v1/admin/dead-letters?event=a%00b', undefined, 'query.event'],
      [
        'a filter in the body',
        'POST',
        '/v1/admin/dead-letters/replay',
        { event: 'a\u0000', reason: 'x' },
        'event',
      ],
      [
        'a reason',
        'POST',
        '/v1/admin/dead-letters/replay',
        { all: true, reason: 'x\u0000y' },
        'reason',
      ],
      [
        'a key',
        'POST',
        '/v1/admin/dead-letters/replay',
        { all: true, 're\u0000ason': 'x' },
        're\u0000ason',
      ],
      ['a player route', 'POST', '/v1/queue/tickets', { mode: 'duel\u0000' }, 'mode'],
      ['a path parameter', 'GET', '/v1/admin/dead-letters/1%00', undefined, 'path.id'],
    ] as const)('in %s is a 400 naming the field', async (_what, method, url, body, field) => {
      const response = await api.request(method, url, {
        token: url.includes('/admin/') ? OPERATOR_TOKEN : player.token,
        ...(body === undefined ? {} : { body }),
        idempotencyKey: randomUUID(),
      });
      expect(problemOf(response)).toBe('400 VALIDATION_FAILED');
      expect(response.json()).toMatchObject({ errors: [{ field }] });
      expect(response.json<{ detail: string }>().detail).toContain('NUL');
      expect(await api.ds.query(`SELECT 1 FROM audit_log`)).toEqual([]);
    });
  });

  describe('null where a field is optional', () => {
    it.each([
      ['the session credential', '/v1/sessions', { credential: null }, 'credential'],
      ['the session provider', '/v1/sessions', { provider: null }, 'provider'],
      [
        'a dead-letter filter',
        '/v1/admin/dead-letters/replay',
        { event: null, reason: 'x' },
        'event',
      ],
      [
        'a dead-letter replay reason',
        '/v1/admin/dead-letters/1/replay',
        { reason: null },
        'reason',
      ],
    ] as const)('in %s is a 400 naming the field', async (_what, url, body, field) => {
      const response = await api.request('POST', url, {
        ...(url.includes('/admin/') ? { token: OPERATOR_TOKEN } : {}),
        body,
      });
      expect(problemOf(response)).toBe('400 VALIDATION_FAILED');
      expect(response.json()).toMatchObject({ errors: [{ field }] });
    });
  });

  describe("Fastify's own refusals", () => {
    it.each([
      ['a malformed percent-encoding', `/v1/queue/tickets/%E0%A4%A`, '400 MALFORMED_URL'],
      [
        'a path parameter past maxParamLength',
        `/v1/queue/tickets/${'a'.repeat(200)}`,
        '414 URI_TOO_LONG',
      ],
    ])('answers %s with problem+json', async (_what, url, expected) => {
      const response = await api.request('GET', url, { token: player.token });
      expect(problemOf(response)).toBe(expected);
      expect(response.json()).toMatchObject({ type: expect.any(String), instance: url });
    });
  });
});
