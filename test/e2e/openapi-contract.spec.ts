import { type ErrorCode, ROUTE_PREFIXES } from '@matchplane/contracts';
import { HTTP_ANSWERS } from '../../apps/api/src/http/http-answers';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { freePort, startApp, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

interface DocumentedResponse {
  content?: Record<string, { schema?: { $ref?: string } }>;
  'x-problem-codes'?: string[];
}
interface DocumentedOperation {
  summary?: string;
  tags?: string[];
  'x-alias-of'?: string;
  responses: Record<string, DocumentedResponse>;
}
type OpenApi = {
  paths: Record<string, Record<string, DocumentedOperation>>;
  components: { schemas: Record<string, unknown> };
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every path the generated contract declares is routed for a real caller, under both prefixes:
 * a declared route that 404s (a router helper rejecting a path, a prefix missing) is the bug
 * this guards against. Unauthenticated calls may be refused (401/403/503), never "no such route".
 */
describe('OpenAPI contract', () => {
  let db: TestDatabase;
  let api: RunningApp;
  let baseUrl: string;
  let document: OpenApi;
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    api = startApp('api', { ...db.env, REDIS_KEY_PREFIX: prefix, API_PORT: String(port) });
    await waitForHttp(`${baseUrl}/health`);
    document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as OpenApi;
  });

  afterAll(async () => {
    await api?.stop();
    await db?.drop();
    await deleteRedisPrefix(prefix);
  });

  it('is served under both prefixes', async () => {
    const other = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as OpenApi;
    expect(other).toEqual(document);
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
  });

  it('declares every path under both prefixes and nothing outside them', () => {
    const paths = Object.keys(document.paths);
    for (const path of paths) {
      const routePrefix = ROUTE_PREFIXES.find((candidate) => path.startsWith(`/${candidate}/`));
      expect(routePrefix).toBeDefined();
      const rest = path.slice((routePrefix ?? '').length + 1);
      for (const other of ROUTE_PREFIXES) expect(paths).toContain(`/${other}${rest}`);
    }
  });

  it('routes every declared path and method', async () => {
    const unrouted: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      const url = baseUrl + path.replace(/\{[^}]+\}/g, '1');
      for (const method of METHODS.filter((m) => m in operations)) {
        const response = await fetch(url, {
          method: method.toUpperCase(),
          headers:
            method === 'get' || method === 'delete' ? {} : { 'content-type': 'application/json' },
          body: method === 'get' || method === 'delete' ? undefined : '{}',
        });
        const body = (await response.json()) as { code?: string };
        // A 404 for a real resource would carry its own code; NOT_FOUND is the router's.
        if (response.status === 404 && body.code === 'NOT_FOUND')
          unrouted.push(`${method.toUpperCase()} ${path}`);
        if (response.status >= 500 && response.status !== 503)
          unrouted.push(`${method.toUpperCase()} ${path} -> ${response.status}`);
      }
    }
    expect(unrouted).toEqual([]);
  });

  const operations = (): [string, string, DocumentedOperation][] =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => m in item).map((m): [string, string, DocumentedOperation] => [
        path,
        m,
        item[m] as DocumentedOperation,
      ]),
    );

  it('gives every operation a summary, one success status and a schema for its body', () => {
    const missing: string[] = [];
    for (const [path, method, operation] of operations()) {
      const what = `${method.toUpperCase()} ${path}`;
      if (!operation.summary) missing.push(`${what}: no summary`);
      const successes = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      if (successes.length === 0) missing.push(`${what}: no success status`);
      for (const status of successes) {
        const schema = operation.responses[status]?.content?.['application/json']?.schema;
        if (status !== '204' && !schema?.$ref) missing.push(`${what} ${status}: no body schema`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents refusals as problem+json with codes the status table answers with that status', () => {
    const wrong: string[] = [];
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const what = `${method.toUpperCase()} ${path} ${status}`;
        const schema = response.content?.['application/problem+json']?.schema;
        if (schema?.$ref !== '#/components/schemas/Problem') wrong.push(`${what}: not a Problem`);
        for (const code of response['x-problem-codes'] ?? []) {
          if (HTTP_ANSWERS[code as ErrorCode]?.status !== Number(status))
            wrong.push(`${what}: ${code}`);
        }
        if (!response['x-problem-codes']?.length) wrong.push(`${what}: no x-problem-codes`);
      }
    }
    expect(wrong).toEqual([]);
    expect(document.components.schemas.Problem).toMatchObject({
      required: ['type', 'title', 'status', 'code'],
    });
  });

  it('marks each /api/v1 operation as an alias of the same /v1 operation, tagged apart', () => {
    for (const [path, method, operation] of operations()) {
      if (!path.startsWith('/api/v1/')) {
        expect(operation['x-alias-of']).toBeUndefined();
        continue;
      }
      const canonical = path.replace(/^\/api\/v1\//, '/v1/');
      expect(operation['x-alias-of']).toBe(canonical);
      expect(operation.tags).toEqual(['aliases (/api/v1)']);
      expect(operation.responses).toEqual(document.paths[canonical]?.[method]?.responses);
    }
  });

  it('answers an undeclared path with a problem+json 404', async () => {
    const response = await fetch(`${baseUrl}/v1/no-such-route`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
