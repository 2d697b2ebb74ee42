import { setTimeout as delay } from 'node:timers/promises';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import {
  NotificationCloseCode,
  type MatchEventMessage,
  type SessionResponse,
} from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { NotificationSubscriber, type NotificationSubscription } from '@matchplane/sdk';
import { useDispatcherProcesses } from '../support/outbox-fixtures';
import {
  MatchDriver,
  STATE_AT,
  TestSocket,
  notificationsUrl,
} from '../support/notification-clients';
import { freePort, startApp, waitFor, waitForHttp, type RunningApp } from '../support/processes';

/**
 * Two API processes and a dispatcher process from dist/ on one database and Redis prefix: a
 * match's events, committed through MatchStore and delivered by the dispatcher over the Redis
 * transport, reach its players on whichever replica they are connected to, in order, and a
 * client that reconnects to the other replica resumes without a gap or a repeat.
 */
describe('Notifications across API replicas', () => {
  const harness = useDispatcherProcesses();
  const apis: RunningApp[] = [];
  const baseUrls: string[] = [];
  const subscriptions: NotificationSubscription[] = [];
  let matches: MatchDriver;

  beforeAll(async () => {
    await harness.start();
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      apis.push(
        startApp('api', {
          ...harness.db.env,
          REDIS_KEY_PREFIX: harness.prefix,
          API_HOST: '127.0.0.1',
          API_PORT: String(port),
          LOG_LEVEL: 'warn',
        }),
      );
      baseUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(baseUrls.map((url) => waitForHttp(`${url}/health`)));
    const config = loadConfig(ServiceConfig, {
      ...harness.db.env,
      REDIS_KEY_PREFIX: harness.prefix,
    });
    const signal = new OutboxSignal(harness.redis, config);
    matches = new MatchDriver(harness.ds, new MatchStore(harness.ds, new OutboxWriter(), signal));
  });

  afterAll(async () => {
    for (const subscription of subscriptions) subscription.close();
    await Promise.all(apis.map((api) => api.stop('SIGKILL')));
  });

  async function newPlayer(baseUrl: string): Promise<SessionResponse> {
    const response = await fetch(`${baseUrl}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(201);
    return (await response.json()) as SessionResponse;
  }

  function subscribe(
    baseUrl: string,
    player: SessionResponse,
    delivered: MatchEventMessage[],
    lastSeen?: Record<string, number>,
  ): NotificationSubscription {
    const subscription = new NotificationSubscriber({
      baseUrl,
      token: player.token,
      ...(lastSeen ? { lastSeen } : {}),
    }).subscribe({ onEvent: (event) => delivered.push(event) });
    subscriptions.push(subscription);
    return subscription;
  }

  const until = (check: () => boolean, what: string) =>
    waitFor(() => Promise.resolve(check() || undefined), { timeoutMs: 20_000, what });

  it('delivers every revision of a match, in order, to its players on both replicas', async () => {
    const [a, b] = await Promise.all([newPlayer(baseUrls[0]!), newPlayer(baseUrls[1]!)]);
    const onA: MatchEventMessage[] = [];
    const onB: MatchEventMessage[] = [];
    await subscribe(baseUrls[0]!, a, onA).ready;
    await subscribe(baseUrls[1]!, b, onB).ready;
    // A raw socket too: what the server itself sends, before the SDK's dedupe.
    const raw = await TestSocket.ready(notificationsUrl(baseUrls[1]!), b.token);

    const matchId = await matches.create([a.playerId, b.playerId]);
    for (let revision = 2; revision <= 5; revision += 1) await matches.advance(matchId);

    await until(() => onA.length >= 5 && onB.length >= 5, 'five revisions on each replica');
    await raw.waitForRevision(matchId, 5);
    const expected = [1, 2, 3, 4, 5].map((revision) => ({
      type: 'event',
      event: 'match.state_changed',
      matchId,
      revision,
      state: STATE_AT[revision],
      occurredAt: expect.any(String),
    }));
    expect(onA).toEqual(expected);
    expect(onB).toEqual(expected);
    expect(raw.revisions(matchId)).toEqual([1, 2, 3, 4, 5]);
    raw.close();
  });

  it('closes a socket on one replica within a second of its session being signed out on the other', async () => {
    const [a, b] = await Promise.all([newPlayer(baseUrls[1]!), newPlayer(baseUrls[1]!)]);
    const onB = await TestSocket.ready(notificationsUrl(baseUrls[1]!), a.token);
    const signedOut = await fetch(`${baseUrls[0]!}/v1/sessions/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(signedOut.status).toBe(204);
    const closed = await Promise.race([onB.closed, delay(1_000, 'still open')]);
    expect(closed).toMatchObject({ code: NotificationCloseCode.UNAUTHENTICATED });

    // Nothing of the player's later matches reaches the closed socket.
    const watcher = await TestSocket.ready(notificationsUrl(baseUrls[1]!), b.token);
    const matchId = await matches.create([a.playerId, b.playerId]);
    await watcher.waitForRevision(matchId, 1);
    expect(onB.events()).toEqual([]);
    watcher.close();
  });

  it('survives a resume nested thousands deep: the sender gets an error, the process and other sockets go on', async () => {
    const [a, b] = await Promise.all([newPlayer(baseUrls[0]!), newPlayer(baseUrls[0]!)]);
    const attacker = await TestSocket.ready(notificationsUrl(baseUrls[0]!), a.token);
    const bystander = await TestSocket.ready(notificationsUrl(baseUrls[0]!), b.token);
    attacker.send(`{"type":"resume","matches":${'['.repeat(3_000)}${']'.repeat(3_000)}}`);
    expect(await attacker.waitFor((m) => m.type === 'error', 'error')).toMatchObject({
      code: 'INVALID_MESSAGE',
    });
    expect((await fetch(`${baseUrls[0]!}/health`)).status).toBe(200);
    const matchId = await matches.create([a.playerId, b.playerId]);
    await bystander.waitForRevision(matchId, 1);
    await attacker.waitForRevision(matchId, 1);
    attacker.close();
    bystander.close();
  });

  it('resumes a client on the other replica from its last revision, without a gap or a repeat', async () => {
    const [a, b] = await Promise.all([newPlayer(baseUrls[0]!), newPlayer(baseUrls[0]!)]);
    const delivered: MatchEventMessage[] = [];
    const first = subscribe(baseUrls[0]!, a, delivered);
    await first.ready;
    const matchId = await matches.create([a.playerId, b.playerId]);
    await matches.advance(matchId);
    await until(() => delivered.length === 2, 'r1 and r2');
    const lastSeen = first.lastSeen();
    first.close();
    await first.done;

    await matches.advance(matchId);
    await matches.advance(matchId);
    // Delivered (and published to the replicas) while the client was away.
    await waitFor(
      async () => {
        const [row] = await harness.ds.query<{ status: string }[]>(
          `SELECT status FROM outbox WHERE aggregate_id = $1 AND revision = 4`,
          [matchId],
        );
        return row?.status === 'published' ? true : undefined;
      },
      { what: 'r4 published' },
    );
    const second = subscribe(baseUrls[1]!, a, delivered, lastSeen);
    await second.ready;
    await matches.advance(matchId);
    await until(() => delivered.length >= 5, 'r3 to r5');
    expect(delivered.map((event) => event.revision)).toEqual([1, 2, 3, 4, 5]);
    expect(second.lastSeen()).toEqual({ [matchId]: 5 });
  });
});
