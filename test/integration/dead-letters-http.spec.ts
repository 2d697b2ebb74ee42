import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { ApiConfig } from '../../apps/api/src/api.config';
// In-process boot of the API's real module graph; the lint rule guards libs, which never import apps.
import { ApiModule } from '../../apps/api/src/api.module';
import { configureApi, createApiAdapter } from '../../apps/api/src/http/configure-api';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TestFactories } from '../support/factories';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * The admin routes in process, over the real module graph (ApiModule) and a real database: DTO
 * validation, problem+json mapping, and the operator recorded as the actor. The auth answers
 * (401/403/503) are proven against the real process in test/e2e/admin-routes.spec.ts.
 */

const ALICE_TOKEN = 'alice-token-0123456789abcdefghijklmnop';

/**
 * An event written by the OutboxWriter and dead-lettered after ten failed deliveries, as the
 * dispatcher does it (test/support/factories.ts).
 */
async function newDeadLetter(
  ds: DataSource,
  seed: {
    event?: 'ticket.state_changed' | 'match.state_changed';
    aggregateId?: string;
    revision?: number;
  } = {},
): Promise<string> {
  const f = TestFactories.standalone(ds);
  const id = await f.outboxEvent(seed);
  await f.deadLetterOutbox([id], { attempts: 10, error: 'Error: boom' });
  return id;
}

describe('admin dead-letter routes (in process)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let app: NestFastifyApplication;
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    const config = loadConfig(ApiConfig, {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      OPERATOR_TOKENS: `alice=${ALICE_TOKEN},bob=bob-token-0123456789abcdefghijklmnopq`,
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ApiModule.forRoot(config)],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(createApiAdapter(config), {
      bodyParser: false,
    });
    configureApi(app);
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
    await db.drop();
    await deleteRedisPrefix(prefix);
  });

  beforeEach(async () => {
    await ds.query('DELETE FROM outbox');
    await ds.query('DELETE FROM audit_log');
  });

  const request = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${ALICE_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return {
      status: response.statusCode,
      type: response.headers['content-type'],
      body: response.json<Record<string, unknown>>(),
    };
  };

  it.each(['/v1', '/api/v1'])('lists, shows, replays and discards under %s/admin', async (base) => {
    const replayable = await newDeadLetter(ds, { revision: 1 });
    const discardable = await newDeadLetter(ds, { revision: 2 });

    const list = await request('GET', `${base}/admin/dead-letters?limit=1`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({
      items: [{ id: replayable, attempts: 10, lastError: 'Error: boom' }],
      nextCursor: expect.any(String) as unknown,
    });
    const next = await request(
      'GET',
      `${base}/admin/dead-letters?limit=1&cursor=${String(list.body.nextCursor)}`,
    );
    expect(next.body).toMatchObject({ items: [{ id: discardable }], nextCursor: null });

    const shown = await request('GET', `${base}/admin/dead-letters/${replayable}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      id: replayable,
      payload: { from: null, to: 'ALLOCATING' },
      history: Array.from({ length: 10 }, (_, i) => ({ attempt: i + 1, error: 'Error: boom' })),
    });

    const replayed = await request('POST', `${base}/admin/dead-letters/${replayable}/replay`, {
      reason: 'fixed',
    });
    expect(replayed).toMatchObject({ status: 200, body: { id: replayable, status: 'pending' } });

    const discarded = await request('POST', `${base}/admin/dead-letters/${discardable}/discard`, {
      reason: 'obsolete',
    });
    expect(discarded).toMatchObject({ status: 200, body: { id: discardable, discarded: true } });

    const audit = await ds.query<
      { actor: string; action: string; target_id: string; reason: string }[]
    >(`SELECT actor, action, target_id, reason FROM audit_log ORDER BY id`);
    expect(audit).toEqual([
      {
        actor: 'alice',
        action: 'outbox.dead_letter.replayed',
        target_id: replayable,
        reason: 'fixed',
      },
      {
        actor: 'alice',
        action: 'outbox.dead_letter.discarded',
        target_id: discardable,
        reason: 'obsolete',
      },
    ]);
  });

  it('replays one dead letter without a reason (a body is optional)', async () => {
    const id = await newDeadLetter(ds);
    const response = await app.inject({
      method: 'POST',
      url: `/v1/admin/dead-letters/${id}/replay`,
      headers: { authorization: `Bearer ${ALICE_TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    const [audit] = await ds.query<{ reason: string | null }[]>(`SELECT reason FROM audit_log`);
    expect(audit).toEqual({ reason: null });
  });

  it.each([
    ['a non-numeric id', 'GET', '/v1/admin/dead-letters/abc', undefined, 'VALIDATION_FAILED'],
    [
      'an id beyond int8',
      'GET',
      '/v1/admin/dead-letters/99999999999999999999',
      undefined,
      'VALIDATION_FAILED',
    ],
    [
      'a non-numeric id on replay',
      'POST',
      '/v1/admin/dead-letters/1x/replay',
      {},
      'VALIDATION_FAILED',
    ],
    ['limit 0', 'GET', '/v1/admin/dead-letters?limit=0', undefined, 'VALIDATION_FAILED'],
    ['limit 501', 'GET', '/v1/admin/dead-letters?limit=501', undefined, 'VALIDATION_FAILED'],
    [
      'a non-UUID aggregate',
      'GET',
      '/v1/admin/dead-letters?aggregateId=42',
      undefined,
      'VALIDATION_FAILED',
    ],
    [
      'a time without a zone',
      'GET',
      '/v1/admin/dead-letters?from=2025-03-01T10:00:00',
      undefined,
      'VALIDATION_FAILED',
    ],
    [
      'an unknown query parameter',
      'GET',
      '/v1/admin/dead-letters?status=pending',
      undefined,
      'VALIDATION_FAILED',
    ],
    [
      'a malformed cursor',
      'GET',
      '/v1/admin/dead-letters?cursor=bm9wZQ',
      undefined,
      'INVALID_CURSOR',
    ],
    [
      'a discard without a reason',
      'POST',
      '/v1/admin/dead-letters/1/discard',
      {},
      'VALIDATION_FAILED',
    ],
    [
      'a discard with a blank reason',
      'POST',
      '/v1/admin/dead-letters/1/discard',
      { reason: '  ' },
      'VALIDATION_FAILED',
    ],
    [
      'a bulk replay with an empty filter',
      'POST',
      '/v1/admin/dead-letters/replay',
      { reason: 'x' },
      'VALIDATION_FAILED',
    ],
    [
      'a bulk replay with all: false',
      'POST',
      '/v1/admin/dead-letters/replay',
      { all: false, reason: 'x' },
      'VALIDATION_FAILED',
    ],
    [
      'a bulk replay without a reason',
      'POST',
      '/v1/admin/dead-letters/replay',
      { all: true },
      'VALIDATION_FAILED',
    ],
    [
      'a bulk replay with an unknown field',
      'POST',
      '/v1/admin/dead-letters/replay',
      { all: true, reason: 'x', status: 'dead' },
      'VALIDATION_FAILED',
    ],
  ] as const)('answers %s with 400 problem+json', async (_what, method, url, body, code) => {
    const id = await newDeadLetter(ds);
    const response = await request(method, url, body);
    expect(response).toMatchObject({ status: 400, body: { status: 400, code } });
    expect(response.type).toContain('application/problem+json');
    const [row] = await ds.query<{ status: string }[]>(`SELECT status FROM outbox WHERE id = $1`, [
      id,
    ]);
    expect(row).toEqual({ status: 'dead' });
  });

  it('answers an unknown id with 404 and a second replay with 409', async () => {
    const id = await newDeadLetter(ds);
    expect(await request('GET', '/v1/admin/dead-letters/987654')).toMatchObject({
      status: 404,
      body: { code: 'DEAD_LETTER_NOT_FOUND' },
    });
    expect(
      await request('POST', '/v1/admin/dead-letters/987654/discard', { reason: 'x' }),
    ).toMatchObject({ status: 404 });
    expect((await request('POST', `/v1/admin/dead-letters/${id}/replay`, {})).status).toBe(200);
    expect(await request('POST', `/v1/admin/dead-letters/${id}/replay`, {})).toMatchObject({
      status: 409,
      body: { code: 'NOT_DEAD_LETTERED' },
    });
    expect(await request('GET', `/v1/admin/dead-letters/${id}`)).toMatchObject({ status: 404 });
  });

  it('bulk-replays by filter, or everything with all: true', async () => {
    const aggregateId = randomUUID();
    await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 1 });
    await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId, revision: 2 });
    await newDeadLetter(ds, { event: 'match.state_changed' });

    expect(
      await request('POST', '/api/v1/admin/dead-letters/replay', {
        event: 'ticket.state_changed',
        aggregateId,
        reason: 'fixed',
      }),
    ).toMatchObject({ status: 200, body: { replayed: 2 } });
    expect(
      await request('POST', '/v1/admin/dead-letters/replay', { all: true, reason: 'the rest' }),
    ).toMatchObject({
      status: 200,
      body: { replayed: 1 },
    });
    const [counts] = await ds.query<{ dead: string; audited: string }[]>(
      `SELECT (SELECT count(*) FROM outbox WHERE status = 'dead') AS dead, (SELECT count(*) FROM audit_log WHERE actor = 'alice') AS audited`,
    );
    expect(counts).toEqual({ dead: '0', audited: '3' });
  });

  it('filters the list by query parameters', async () => {
    const aggregateId = randomUUID();
    const wanted = await newDeadLetter(ds, { event: 'ticket.state_changed', aggregateId });
    await newDeadLetter(ds, { event: 'match.state_changed', aggregateId, revision: 2 });
    await newDeadLetter(ds, { event: 'ticket.state_changed' });
    const from = new Date(Date.now() - 60_000).toISOString();

    const response = await request(
      'GET',
      `/v1/admin/dead-letters?event=ticket.state_changed&aggregateId=${aggregateId}&from=${encodeURIComponent(from)}`,
    );
    expect(response.status).toBe(200);
    expect((response.body.items as { id: string }[]).map((item) => item.id)).toEqual([wanted]);
  });

  it.each(['/v1', '/api/v1'])('serves outbox stats under %s/admin', async (base) => {
    await newDeadLetter(ds, { event: 'ticket.state_changed' });
    const response = await request('GET', `${base}/admin/outbox/stats`);
    expect(response).toMatchObject({
      status: 200,
      body: {
        pending: { count: 0, oldestAgeSeconds: null },
        deadLetters: { count: 1, byEvent: [{ event: 'ticket.state_changed', count: 1 }] },
        blockedAggregates: { count: 0, waitingBehind: 0, top: [] },
      },
    });
  });
});
