import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@matchplane/config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import { MatchStore } from '@matchplane/matches';
import { DispatcherModule } from '../../apps/dispatcher/src/dispatcher.module';
import {
  StudioWebhookConfig,
  StudioWebhookModule,
  verifyWebhook,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type StudioWebhookBody,
} from '../../apps/studio-example/src/studio-webhook.module';
import { outboxRows } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';
import { commitMatch, queuePlayers } from '../support/allocation-harness';

const SECRET = 'studio-webhook-secret-for-the-example-only';

interface Received {
  body: StudioWebhookBody;
  raw: string;
  headers: IncomingHttpHeaders;
  signatureValid: boolean;
  answered: number;
}

/** The studio's backend: checks every signature, answers what the test tells it to. */
class WebhookReceiver {
  readonly received: Received[] = [];
  answer: (body: StudioWebhookBody) => number = () => 204;
  private readonly server: Server;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const signatureValid = verifyWebhook(SECRET, {
          body: raw,
          timestamp: header(request.headers, WEBHOOK_TIMESTAMP_HEADER),
          signature: header(request.headers, WEBHOOK_SIGNATURE_HEADER),
        });
        const body = JSON.parse(raw) as StudioWebhookBody;
        const answered = signatureValid ? this.answer(body) : 401;
        this.received.push({ body, raw, headers: request.headers, signatureValid, answered });
        response.writeHead(answered).end();
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/hooks/matchplane?token=not-for-logs`;
  }

  of(matchId: string): Received[] {
    return this.received.filter((r) => r.body.aggregateId === matchId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** docs/EXTENDING.md "A new outbox subscriber": the example module booted into the real dispatcher. */
describe('extending: a signed webhook outbox subscriber', () => {
  const receiver = new WebhookReceiver();
  let api: PlayerApi;
  let dispatcher: INestApplicationContext;
  let matches: MatchStore;

  beforeAll(async () => {
    api = await startPlayerApi();
    matches = api.app.get(MatchStore, { strict: false });
    const webhook = loadConfig(StudioWebhookConfig, {
      STUDIO_WEBHOOK_URL: await receiver.listen(),
      STUDIO_WEBHOOK_SECRET: SECRET,
    });
    const config = loadConfig(DispatcherConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
      OUTBOX_POLL_INTERVAL_MS: '50',
      OUTBOX_RETRY_BASE_MS: '50',
      OUTBOX_RETRY_CAP_MS: '200',
    });
    dispatcher = await NestFactory.createApplicationContext(
      DispatcherModule.forRoot(config, [StudioWebhookModule.register(webhook)]),
      { logger: false, abortOnError: false },
    );
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
    await receiver.close();
  });

  /** A real match (players queued through the API, committed as the matcher does): its id. */
  async function newMatch(): Promise<string> {
    return commitMatch(api, await queuePlayers(api, 2, 'duel'), 'duel');
  }

  const accepted = (matchId: string) =>
    receiver.of(matchId).filter((r) => r.answered >= 200 && r.answered < 300);

  /** The match's outbox rows once none is pending any more (acked or dead-lettered). */
  const settledRows = (matchId: string, revisions: number) =>
    waitFor(
      async () => {
        const rows = await outboxRows(api.ds, [matchId]);
        const settled = rows.length === revisions && rows.every((row) => row.status !== 'pending');
        return settled ? rows : undefined;
      },
      { what: `${revisions} settled outbox rows of match ${matchId}` },
    );

  it('POSTs every state change of a match in revision order, signed, and retries a 5xx', async () => {
    let refusedOnce = false;
    receiver.answer = (body) => {
      // The backend has a bad moment on revision 2: the outbox must retry it before revision 3.
      if (body.revision === 2 && !refusedOnce) {
        refusedOnce = true;
        return 503;
      }
      return 204;
    };
    const matchId = await newMatch();
    await matches.transitionNow(matchId, { to: 'PROCESS_READY' });
    await matches.transitionNow(matchId, { to: 'ASSIGNMENT_READY' });
    await matches.transitionNow(matchId, { to: 'IN_PROGRESS' });

    const rows = await settledRows(matchId, 4);
    const received = receiver.of(matchId);
    expect(received.map((r) => [r.body.revision, r.answered])).toEqual([
      [1, 204],
      [2, 503],
      [2, 204],
      [3, 204],
      [4, 204],
    ]);
    expect(received.every((r) => r.signatureValid)).toBe(true);
    expect(accepted(matchId).map((r) => 'to' in r.body.payload && r.body.payload.to)).toEqual([
      'ALLOCATING',
      'PROCESS_READY',
      'ASSIGNMENT_READY',
      'IN_PROGRESS',
    ]);
    expect(received[0]?.headers[WEBHOOK_DELIVERY_HEADER]).toBe(`${matchId}:1`);
    expect(received[0]?.body).toMatchObject({
      deliveryId: `${matchId}:1`,
      event: 'match.state_changed',
      aggregateType: 'match',
      playerIds: expect.arrayContaining([expect.any(String), expect.any(String)]),
    });

    expect(rows.map((row) => [row.revision, row.status, row.attempts])).toEqual([
      [1, 'published', 0],
      [2, 'published', 1],
      [3, 'published', 0],
      [4, 'published', 0],
    ]);
    // The stored error names the receiver's origin and the status, never its path or query.
    expect(rows[1]?.last_error).toContain('503');
    expect(rows[1]?.last_error).not.toContain('token');

    // What the receiver's check refuses: another body, another key, a stale timestamp.
    const sample = received[0]!;
    const request = {
      body: sample.raw,
      timestamp: header(sample.headers, WEBHOOK_TIMESTAMP_HEADER),
      signature: header(sample.headers, WEBHOOK_SIGNATURE_HEADER),
    };
    const signedAt = Number(request.timestamp);
    expect(verifyWebhook(SECRET, request, signedAt)).toBe(true);
    expect(verifyWebhook(SECRET, { ...request, body: `${sample.raw} ` }, signedAt)).toBe(false);
    expect(verifyWebhook(`${SECRET}!`, request, signedAt)).toBe(false);
    expect(verifyWebhook(SECRET, request, signedAt + 10 * 60_000)).toBe(false);
  });

  it('dead-letters a change the receiver refuses with a 4xx at once, and the match moves on', async () => {
    let refused: string | undefined;
    receiver.answer = (body) => {
      if (body.revision === 1 && refused === undefined) {
        refused = body.deliveryId;
        return 400;
      }
      return 204;
    };
    const matchId = await newMatch();
    await matches.transitionNow(matchId, { to: 'PROCESS_READY' });

    const rows = await settledRows(matchId, 2);
    expect(refused).toBe(`${matchId}:1`);
    expect(receiver.of(matchId).map((r) => [r.body.revision, r.answered])).toEqual([
      [1, 400],
      [2, 204],
    ]);
    expect(rows.map((row) => [row.revision, row.status, row.attempts])).toEqual([
      [1, 'dead', 1],
      [2, 'published', 0],
    ]);
    expect(rows[0]?.last_error).toMatch(/^PermanentDeliveryError: .*400/);
  });
});
