import { setTimeout as delay } from 'node:timers/promises';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  NOTIFICATIONS_SUBPROTOCOL,
  NotificationCloseCode,
  ResyncReason,
  type MatchEventMessage,
  type MatchEventsResponse,
  type ResyncMessage,
  type SessionResponse,
} from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { SessionService } from '@matchplane/players';
import { NotificationSubscriber, type NotificationSubscription } from '@matchplane/sdk';
import { NotificationsGateway } from '../../apps/api/src/notifications/notifications.gateway';
import {
  dispatcherEnv,
  outboxRows,
  startInProcessDispatcher,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import {
  MatchDriver,
  STATE_AT,
  TestSocket,
  listen,
  notificationsUrl,
} from '../support/notification-clients';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';

/**
 * The notification socket of one API (in process) fed by the real dispatcher: match changes made
 * through MatchStore become outbox rows, the dispatcher delivers them over the Redis transport,
 * and the API pushes them to the participants' sockets.
 */
describe(NotificationsGateway.name, () => {
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let matches: MatchDriver;
  let baseUrl: string;
  let url: string;

  beforeAll(async () => {
    api = await startPlayerApi();
    baseUrl = await listen(api.app);
    url = notificationsUrl(api.app);
    dispatcher = await startInProcessDispatcher(await dispatcherEnv(api.db, api.prefix));
    matches = new MatchDriver(api.ds, api.app.get(MatchStore, { strict: false }));
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
  });

  const players = (count: number): Promise<SessionResponse[]> =>
    Promise.all(Array.from({ length: count }, () => api.newPlayer()));

  const deliveredRevision = async (matchId: string, revision: number): Promise<void> => {
    await waitFor(
      async () => {
        const rows = await outboxRows(api.ds, [matchId]);
        return rows.some((row) => row.revision === revision && row.status === 'published')
          ? true
          : undefined;
      },
      { what: `r${revision} of ${matchId} published` },
    );
  };

  describe('authentication', () => {
    it.each([
      ['no token', {}],
      ['a malformed token', { token: 'not-a-token' }],
      ['an unknown token', { token: `mps_${'A'.repeat(43)}` }],
    ])('closes a socket with %s with 4401', async (_, options) => {
      const client = new TestSocket(url, options);
      expect(await client.closed).toMatchObject({ code: NotificationCloseCode.UNAUTHENTICATED });
      expect(client.messages).toEqual([]);
    });

    it('closes the socket of an ended session with 4401', async () => {
      const [player] = await players(1);
      const ended = await api.request('DELETE', '/v1/sessions/current', { token: player!.token });
      expect(ended.statusCode).toBeLessThan(300);
      const client = new TestSocket(url, { token: player!.token });
      expect((await client.closed).code).toBe(NotificationCloseCode.UNAUTHENTICATED);
    });

    it('closes the socket of a session revoked after it connected with 4401 within a second; the next events never reach it', async () => {
      const [a, b] = await players(2);
      // The same player signed in on a second device: its own session, untouched by the sign-out.
      const second = await api.request('POST', '/v1/sessions', {
        body: { credential: a!.deviceSecret },
      });
      const otherDevice = second.json<SessionResponse>();
      expect(otherDevice.playerId).toBe(a!.playerId);
      const revoked = await TestSocket.ready(url, a!.token);
      const kept = await TestSocket.ready(url, otherDevice.token);

      const signedOut = await api.request('DELETE', '/v1/sessions/current', { token: a!.token });
      expect(signedOut.statusCode).toBe(204);
      const closed = await Promise.race([revoked.closed, delay(1_000, 'still open')]);
      expect(closed).toMatchObject({ code: NotificationCloseCode.UNAUTHENTICATED });

      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await kept.waitForRevision(matchId, 1);
      expect(revoked.events()).toEqual([]);
      expect(kept.socket.readyState).toBe(kept.socket.OPEN);
      kept.close();
    });

    it('closes the socket when its session expires, with 4401', async () => {
      const sessions = api.app.get(SessionService, { strict: false });
      // Issued (by the production path) so that it has about a second left.
      const issuedAt = new Date(Date.now() - (api.config.SESSION_TTL_SECONDS - 1) * 1000);
      const expiring = await sessions.create('guest', undefined, issuedAt);
      const client = await TestSocket.ready(url, expiring.token);
      const closed = await client.closed;
      expect(closed).toMatchObject({ code: NotificationCloseCode.UNAUTHENTICATED });
      expect(Date.now()).toBeGreaterThanOrEqual(expiring.expiresAt.getTime());
    });

    it('takes the token as a subprotocol (browsers) and selects the notifications subprotocol', async () => {
      const [player] = await players(1);
      const client = new TestSocket(url, {
        protocols: [NOTIFICATIONS_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${player!.token}`],
      });
      expect(await client.waitFor((m) => m.type === 'ready', 'ready')).toMatchObject({
        type: 'ready',
        playerId: player!.playerId,
        bufferLimit: api.config.NOTIFY_SOCKET_BUFFER,
      });
      expect(client.socket.protocol).toBe(NOTIFICATIONS_SUBPROTOCOL);
      client.close();
    });

    it('is served under the contract prefix too', async () => {
      const [player] = await players(1);
      const client = await TestSocket.ready(notificationsUrl(api.app, 'api/v1'), player!.token);
      client.close();
    });
  });

  describe('live events', () => {
    it("pushes every revision of a match to each participant's socket, in order", async () => {
      const [a, b, outsider] = await players(3);
      const clients = await Promise.all(
        [a!, b!, outsider!].map((p) => TestSocket.ready(url, p.token)),
      );
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      for (let revision = 2; revision <= 5; revision += 1) await matches.advance(matchId);
      for (const client of clients.slice(0, 2)) {
        await client.waitForRevision(matchId, 5);
        expect(client.events(matchId)).toEqual(
          [1, 2, 3, 4, 5].map((revision) => ({
            type: 'event',
            event: 'match.state_changed',
            matchId,
            revision,
            state: STATE_AT[revision],
            occurredAt: expect.any(String),
            receivedAt: expect.any(Number),
          })),
        );
      }
      // Nobody else's socket hears of it.
      expect(clients[2]!.events()).toEqual([]);
      for (const client of clients) client.close();
    });

    it('fills in from revision 1 a match a socket first hears of mid-way', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 2);
      const late = await TestSocket.ready(url, a!.token);
      await matches.advance(matchId);
      await late.waitForRevision(matchId, 3);
      expect(late.revisions(matchId)).toEqual([1, 2, 3]);
      late.close();
    });
  });

  describe('resume', () => {
    it('tells a socket that connects after its match changed about that match at once, not at its next event', async () => {
      // What the chaos run met: a player matched while its socket was reconnecting (an API
      // replica killed) heard of the match only at the next event, seconds later.
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await deliveredRevision(matchId, 1);
      const late = await TestSocket.ready(url, a!.token);
      await late.waitForRevision(matchId, 1);
      expect(late.revisions(matchId)).toEqual([1]);
      late.close();
    });

    it('replays what a reconnecting socket missed, then goes on live, without a gap or a repeat', async () => {
      const [a, b] = await players(2);
      const first = await TestSocket.ready(url, a!.token);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await first.waitForRevision(matchId, 2);
      first.close();
      await first.closed;

      await matches.advance(matchId);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 4);
      const second = new TestSocket(url, { token: a!.token });
      // Sent before the token is checked: the server holds it until then.
      second.socket.once('open', () => second.send({ type: 'resume', matches: { [matchId]: 2 } }));
      await second.waitForRevision(matchId, 4);
      await matches.advance(matchId);
      await second.waitForRevision(matchId, 5);
      expect(second.revisions(matchId)).toEqual([3, 4, 5]);
      second.close();
    });

    it('gives the SDK every revision once, in order, across a disconnect', async () => {
      const [a, b] = await players(2);
      const delivered: number[] = [];
      const subscribe = (lastSeen?: Record<string, number>): NotificationSubscription =>
        new NotificationSubscriber({
          baseUrl,
          token: a!.token,
          ...(lastSeen ? { lastSeen } : {}),
        }).subscribe({ onEvent: (event) => delivered.push(event.revision) });

      const first = subscribe();
      await first.ready;
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await waitFor(() => Promise.resolve(delivered.length === 2 || undefined), { what: 'r2' });
      const lastSeen = first.lastSeen();
      expect(lastSeen).toEqual({ [matchId]: 2 });
      first.close();
      expect(await first.done).toEqual({ reason: 'closed' });

      await matches.advance(matchId);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 4);
      const second = subscribe(lastSeen);
      await second.ready;
      await matches.advance(matchId);
      await waitFor(() => Promise.resolve(delivered.length >= 5 || undefined), { what: 'r5' });
      expect(delivered).toEqual([1, 2, 3, 4, 5]);
      expect(second.lastSeen()).toEqual({ [matchId]: 5 });
      second.close();
    });

    it('answers a resume of a match the player is not part of with MATCH_NOT_FOUND', async () => {
      const [a, b, outsider] = await players(3);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      const client = await TestSocket.ready(url, outsider!.token);
      client.send({ type: 'resume', matches: { [matchId]: 0 } });
      expect(await client.waitFor((m) => m.type === 'error', 'error')).toMatchObject({
        type: 'error',
        code: 'MATCH_NOT_FOUND',
        matchId,
      });
      expect(client.events()).toEqual([]);
      client.close();
    });

    it('refuses a malformed resume with INVALID_MESSAGE and keeps the socket open', async () => {
      const [a] = await players(1);
      const client = await TestSocket.ready(url, a!.token);
      client.send('{not json');
      client.send({ type: 'resume', matches: { 'not-a-uuid': 1 } });
      client.send({ type: 'resume', matches: {}, extra: true });
      await waitFor(
        () =>
          Promise.resolve(
            client.messages.filter((m) => m.type === 'error').length === 3 || undefined,
          ),
        { what: 'three errors' },
      );
      expect(
        client.messages.filter((m) => m.type === 'error').map((m) => 'code' in m && m.code),
      ).toEqual(['INVALID_MESSAGE', 'INVALID_MESSAGE', 'INVALID_MESSAGE']);
      expect(client.socket.readyState).toBe(client.socket.OPEN);
      client.close();
    });

    it('answers a resume nested thousands deep with INVALID_MESSAGE; the process and other sockets go on', async () => {
      const [a, b] = await players(2);
      const attacker = await TestSocket.ready(url, a!.token);
      const bystander = await TestSocket.ready(url, b!.token);
      // About 6 KB: `matches` an array nested 3,000 deep (a crash of the whole API before the limit).
      attacker.send(`{"type":"resume","matches":${'['.repeat(3_000)}${']'.repeat(3_000)}}`);
      const refused = await attacker.waitFor((m) => m.type === 'error', 'error');
      expect(refused).toMatchObject({ type: 'error', code: 'INVALID_MESSAGE' });
      expect('message' in refused && refused.message).toContain(
        `deeper than ${api.config.API_JSON_MAX_DEPTH} levels`,
      );
      expect(attacker.socket.readyState).toBe(attacker.socket.OPEN);

      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await bystander.waitForRevision(matchId, 1);
      await attacker.waitForRevision(matchId, 1);
      attacker.close();
      bystander.close();
    });

    it(`closes a socket sending a frame over the size limit with ${NotificationCloseCode.MESSAGE_TOO_BIG}, and only that socket`, async () => {
      const [a, b] = await players(2);
      const attacker = await TestSocket.ready(url, a!.token);
      const bystander = await TestSocket.ready(url, b!.token);
      attacker.send(`{"type":"resume","matches":{},"padding":"${'x'.repeat(20 * 1024)}"}`);
      expect((await attacker.closed).code).toBe(NotificationCloseCode.MESSAGE_TOO_BIG);
      const matchId = await matches.create([b!.playerId, a!.playerId]);
      await bystander.waitForRevision(matchId, 1);
      bystander.close();
    });
  });

  describe('retention', () => {
    // Deleting a match's published outbox rows with SQL stands in for the retention purge, which
    // deletes exactly those rows once RETENTION_OUTBOX_PUBLISHED_SECONDS have passed.
    const purge = (matchId: string, upToRevision: number) =>
      api.ds.query(
        `DELETE FROM outbox WHERE aggregate_id = $1 AND status = 'published' AND revision <= $2`,
        [matchId, upToRevision],
      );

    it('sends a socket resuming past the retained rows a resync to the current state, then live events', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 3);
      await purge(matchId, 3);

      const client = await TestSocket.ready(url, a!.token);
      client.send({ type: 'resume', matches: { [matchId]: 0 } });
      const resync = await client.waitFor((m) => m.type === 'resync', 'resync');
      expect(resync).toMatchObject({
        type: 'resync',
        matchId,
        state: 'ASSIGNMENT_READY',
        revision: 3,
        reason: ResyncReason.RETENTION_EXPIRED,
      });
      await matches.advance(matchId);
      await client.waitForRevision(matchId, 4);
      expect(client.revisions(matchId)).toEqual([4]);
      client.close();
    });

    it('replays without a resync while the next revision the client needs is still retained', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 3);
      await purge(matchId, 1);
      const client = new TestSocket(url, { token: a!.token });
      // At open, as the SDK resumes: a resume sent only after `ready` races the server's own
      // discovery of the player's live matches, which starts from revision 1 (here: a resync).
      client.socket.once('open', () => client.send({ type: 'resume', matches: { [matchId]: 1 } }));
      await client.waitForRevision(matchId, 3);
      expect(client.revisions(matchId)).toEqual([2, 3]);
      expect(client.messages.some((m) => m.type === 'resync')).toBe(false);
      client.close();
    });

    it('surfaces the resync through the SDK and goes on from its revision', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 2);
      await purge(matchId, 2);
      const resyncs: ResyncMessage[] = [];
      const events: MatchEventMessage[] = [];
      const subscription = new NotificationSubscriber({
        baseUrl,
        token: a!.token,
        lastSeen: { [matchId]: 0 },
      }).subscribe({ onEvent: (e) => events.push(e), onResync: (r) => resyncs.push(r) });
      await waitFor(() => Promise.resolve(resyncs.length > 0 || undefined), { what: 'resync' });
      expect(resyncs).toEqual([
        {
          type: 'resync',
          matchId,
          state: 'PROCESS_READY',
          revision: 2,
          reason: 'RETENTION_EXPIRED',
        },
      ]);
      await matches.advance(matchId);
      await waitFor(() => Promise.resolve(events.length > 0 || undefined), { what: 'r3' });
      expect(events.map((e) => e.revision)).toEqual([3]);
      subscription.close();
    });
  });

  describe('GET /v1/matches/{id}/events', () => {
    it('serves a participant the retained events after N under both prefixes', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await matches.advance(matchId);
      for (const prefix of ['/v1', '/api/v1']) {
        const response = await api.request('GET', `${prefix}/matches/${matchId}/events?after=1`, {
          token: b!.token,
        });
        expect(response.statusCode).toBe(200);
        expect(response.json<MatchEventsResponse>()).toEqual({
          matchId,
          state: 'ASSIGNMENT_READY',
          revision: 3,
          messages: [2, 3].map((revision) => ({
            type: 'event',
            event: 'match.state_changed',
            matchId,
            revision,
            state: STATE_AT[revision],
            occurredAt: expect.any(String),
          })),
        });
      }
      const all = await api.request('GET', `/v1/matches/${matchId}/events`, { token: a!.token });
      expect(all.json<MatchEventsResponse>().messages.map((m) => m.revision)).toEqual([1, 2, 3]);
    });

    it('answers a resync past the retained rows', async () => {
      const [a, b] = await players(2);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      await matches.advance(matchId);
      await deliveredRevision(matchId, 2);
      await api.ds.query(`DELETE FROM outbox WHERE aggregate_id = $1 AND status = 'published'`, [
        matchId,
      ]);
      const response = await api.request('GET', `/v1/matches/${matchId}/events?after=0`, {
        token: a!.token,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json<MatchEventsResponse>().messages).toEqual([
        {
          type: 'resync',
          matchId,
          state: 'PROCESS_READY',
          revision: 2,
          reason: 'RETENTION_EXPIRED',
        },
      ]);
    });

    it('answers 404 to a player who is not a participant, as for an unknown match', async () => {
      const [a, b, outsider] = await players(3);
      const matchId = await matches.create([a!.playerId, b!.playerId]);
      const response = await api.request('GET', `/v1/matches/${matchId}/events`, {
        token: outsider!.token,
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'NOT_FOUND' });
      const unknown = await api.request(
        'GET',
        `/v1/matches/00000000-0000-4000-8000-000000000000/events`,
        { token: outsider!.token },
      );
      expect(unknown.statusCode).toBe(404);
    });

    it('refuses a missing token (401), a bad id and a bad `after` (400)', async () => {
      const [a] = await players(1);
      const id = '00000000-0000-4000-8000-000000000000';
      expect((await api.request('GET', `/v1/matches/${id}/events`)).statusCode).toBe(401);
      const badId = await api.request('GET', '/v1/matches/nope/events', { token: a!.token });
      expect(badId.statusCode).toBe(400);
      for (const after of ['-1', '1.5', 'x']) {
        const response = await api.request('GET', `/v1/matches/${id}/events?after=${after}`, {
          token: a!.token,
        });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
      }
    });
  });
});
