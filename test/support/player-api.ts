import { randomBytes, randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { ApiConfig } from '../../apps/api/src/api.config';
import type {
  ProbeChallengeResponse,
  SessionResponse,
  TicketResponse,
} from '@matchplane/contracts';
// In-process boot of the API's real module graph (libs never import apps; tests may).
import { ApiModule, type ApiModuleOptions } from '../../apps/api/src/api.module';
import { configureApi, createApiAdapter } from '../../apps/api/src/http/configure-api';
import { writeKeyFile } from './app-sandbox';
import { createTestDatabase, type TestDatabase } from './database';
import { deleteRedisPrefix, testRedisPrefix } from './redis';

export interface InjectedResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export interface PlayerApi {
  app: NestFastifyApplication;
  db: TestDatabase;
  ds: DataSource;
  prefix: string;
  config: ApiConfig;
  request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options?: {
      token?: string;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
      idempotencyKey?: string;
    },
  ): Promise<InjectedResponse>;
  /** A new guest session through POST /v1/sessions. */
  newPlayer(): Promise<SessionResponse>;
  /**
   * One probe round trip (challenge, answer) through the real routes, answering `delayMs` after the
   * challenge (measured as that much more RTT); answers the answer.
   */
  probe(token: string, region: string, delayMs?: number): Promise<InjectedResponse>;
  enqueue(token: string, mode: string, key?: string): Promise<InjectedResponse>;
  close(): Promise<void>;
}

async function bootApi(
  config: ApiConfig,
  options: ApiModuleOptions,
): Promise<NestFastifyApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ApiModule.forRoot(config, options)],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createApiAdapter(config), {
    bodyParser: false,
  });
  configureApi(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/**
 * Another API replica over the same database and Redis prefix as `api` (close it yourself, before
 * `api`).
 */
export function startApiReplica(
  api: PlayerApi,
  options: ApiModuleOptions = {},
): Promise<NestFastifyApplication> {
  return bootApi(api.config, options);
}

/** The API's real module graph in process over a private database and Redis prefix. */
export async function startPlayerApi(
  env: Record<string, string> = {},
  options: ApiModuleOptions = {},
): Promise<PlayerApi> {
  const db = await createTestDatabase();
  const ds = await db.dataSource();
  const prefix = testRedisPrefix();
  const config = loadConfig(ApiConfig, {
    ...db.env,
    REDIS_KEY_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    // A probe key set of its own, so edge measurements can be recorded (and factories sign them).
    PROBE_KEYS_FILE: writeKeyFile({ 'test-probe': randomBytes(32) }),
    // The active rule set is read at start; a poll every 2 s would land inside the suites that
    // count one request's statements. A suite that switches versions sets a short interval.
    RULE_SET_POLL_INTERVAL_MS: '600000',
    ...env,
  });
  const app = await bootApi(config, options);

  const request: PlayerApi['request'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    let payload: string | undefined;
    if (opts.rawBody !== undefined) payload = opts.rawBody;
    else if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined && !headers['content-type'])
      headers['content-type'] = 'application/json';
    const response = await app.inject({
      method,
      url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
    return response;
  };

  const api: PlayerApi = {
    app,
    db,
    ds,
    prefix,
    config,
    request,
    async newPlayer() {
      const response = await request('POST', '/v1/sessions', { body: {} });
      if (response.statusCode !== 201)
        throw new Error(`session: ${response.statusCode} ${response.body}`);
      return response.json<SessionResponse>();
    },
    async probe(token, region, delayMs = 0) {
      const challenge = await request('POST', `/v1/probes/${region}/challenge`, { token });
      if (challenge.statusCode !== 201) return challenge;
      const { challengeId, nonce } = challenge.json<ProbeChallengeResponse>();
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return request('POST', `/v1/probes/${region}/answer`, {
        token,
        body: { challengeId, nonce },
      });
    },
    enqueue(token, mode, key = randomUUID()) {
      return request('POST', '/v1/queue/tickets', { token, body: { mode }, idempotencyKey: key });
    },
    async close() {
      await app.close();
      await db.drop();
      await deleteRedisPrefix(prefix);
    },
  };
  return api;
}

export type { TicketResponse };
