import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { freePort, startApp, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * The admin routes on the real API process: the operator guard's three refusals, and one
 * replay whose audit row names the operator the token belongs to.
 */

const OPERATORS = {
  alice: 'alice-token-0123456789abcdefghijklmnop',
  bob: 'bob-token-0123456789abcdefghijklmnopqrs',
};

const ADMIN_ROUTES: [method: 'GET' | 'POST', path: string][] = [
  ['GET', 'admin/dead-letters'],
  ['GET', 'admin/dead-letters/1'],
  ['POST', 'admin/dead-letters/1/replay'],
  ['POST', 'admin/dead-letters/replay'],
  ['POST', 'admin/dead-letters/1/discard'],
  ['GET', 'admin/outbox/stats'],
  ['GET', 'admin/players/00000000-0000-4000-8000-000000000001/rating'],
  ['POST', 'admin/ratings/import'],
  ['GET', 'admin/queue/arrivals?from=2026-12-01T00:00:00Z'],
  ['GET', 'admin/rule-sets'],
  ['POST', 'admin/rule-sets'],
  ['POST', 'admin/rule-sets/1/activate'],
  ['POST', 'admin/rule-sets/rollback'],
];

/** A request each route would accept from an operator (so only the guard can refuse it). */
function adminRequest(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
): RequestInit {
  if (method === 'GET') return { method, headers };
  const body = url.endsWith('/dead-letters/replay')
    ? { reason: 'x', all: true }
    : url.endsWith('/rule-sets')
      ? { reason: 'x', rules: { MATCH_WIDENING: '0:60:100' } }
      : { reason: 'x' };
  return {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

/** An event written by the OutboxWriter and dead-lettered by OutboxRepository.settle (test/support/factories.ts). */
async function newDeadLetter(ds: DataSource): Promise<string> {
  const f = TestFactories.standalone(ds);
  const id = await f.outboxEvent();
  await f.deadLetterOutbox([id], { attempts: 10, error: 'Error: boom' });
  return id;
}

describe('admin routes on the running API', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];

  async function startApi(extra: Record<string, string>): Promise<string> {
    const port = await freePort();
    const app = startApp('api', {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
      API_PORT: String(port),
      API_HOST: '127.0.0.1',
      ...extra,
    });
    running.push(app);
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/health`);
    return base;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
  });

  afterAll(async () => {
    await Promise.all(running.splice(0).map((app) => app.stop('SIGKILL')));
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  describe('with operators configured', () => {
    let base: string;

    beforeAll(async () => {
      base = await startApi({ OPERATOR_TOKENS: `alice=${OPERATORS.alice},bob=${OPERATORS.bob}` });
    });

    const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) =>
      fetch(url, adminRequest(method, url, headers));

    it.each(
      ADMIN_ROUTES.flatMap(([method, path]) =>
        ['v1', 'api/v1'].map((prefix) => [method, `/${prefix}/${path}`] as const),
      ),
    )(
      '%s %s answers 401 problem+json with a Bearer challenge without a token',
      async (method, path) => {
        const response = await call(method, `${base}${path}`);
        expect(response.status).toBe(401);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect(await response.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      },
    );

    it.each(ADMIN_ROUTES)(
      "%s /v1/%s answers 403 to a bearer token that is no operator's",
      async (method, path) => {
        const response = await call(method, `${base}/v1/${path}`, {
          authorization: 'Bearer not-an-operator-token-at-all-000000',
        });
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });
      },
    );

    it('answers 401 to an operator token presented under another scheme', async () => {
      const response = await call('GET', `${base}/v1/admin/dead-letters`, {
        authorization: `Basic ${OPERATORS.alice}`,
      });
      expect(response.status).toBe(401);
    });

    it('records the operator whose token was presented as the actor of a replay', async () => {
      const id = await newDeadLetter(ds);
      const listed = await call('GET', `${base}/api/v1/admin/dead-letters`, {
        authorization: `Bearer ${OPERATORS.bob}`,
      });
      expect(listed.status).toBe(200);
      expect(
        ((await listed.json()) as { items: { id: string }[] }).items.map((item) => item.id),
      ).toContain(id);

      const response = await fetch(`${base}/v1/admin/dead-letters/${id}/replay`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATORS.bob}`, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'subscriber redeployed' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id, status: 'pending' });

      const [row] = await ds.query<{ status: string; attempts: number }[]>(
        `SELECT status, attempts FROM outbox WHERE id = $1`,
        [id],
      );
      expect(row).toEqual({ status: 'pending', attempts: 0 });
      const audit = await ds.query<{ actor: string; reason: string }[]>(
        `SELECT actor, reason FROM audit_log WHERE target_id = $1`,
        [id],
      );
      expect(audit).toEqual([{ actor: 'bob', reason: 'subscriber redeployed' }]);
    });

    it('answers a non-numeric id with 400 and an unknown one with 404', async () => {
      const headers = { authorization: `Bearer ${OPERATORS.alice}` };
      expect(
        (await call('GET', `${base}/v1/admin/dead-letters/not-a-number`, headers)).status,
      ).toBe(400);
      const missing = await call('GET', `${base}/v1/admin/dead-letters/123456789`, headers);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ code: 'DEAD_LETTER_NOT_FOUND' });
    });
  });

  describe('with OPERATOR_TOKENS unset', () => {
    let base: string;

    beforeAll(async () => {
      base = await startApi({});
    });

    it.each(ADMIN_ROUTES)(
      '%s /v1/%s answers 503 NOT_CONFIGURED, even with a token, and changes nothing',
      async (method, path) => {
        const id = await newDeadLetter(ds);
        const url = `${base}/v1/${path.replace('/1/', `/${id}/`)}`;
        const response = await fetch(
          url,
          adminRequest(method, url, { authorization: `Bearer ${OPERATORS.alice}` }),
        );
        expect(response.status).toBe(503);
        expect(await response.json()).toMatchObject({ status: 503, code: 'NOT_CONFIGURED' });
        const [row] = await ds.query<{ status: string }[]>(
          `SELECT status FROM outbox WHERE id = $1`,
          [id],
        );
        expect(row).toEqual({ status: 'dead' });
      },
    );
  });
});
