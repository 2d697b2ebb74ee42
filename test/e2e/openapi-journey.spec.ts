import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { PlayerClient, type FetchLike, type GameConnection } from '@matchplane/sdk';
import { asyncApiFrameChecker } from '../support/asyncapi-validator';
import { useControlPlane, withTimeout, type ControlPlaneOptions } from '../support/journey';
import { OpenApiValidator, type OpenApiDocument } from '../support/openapi-validator';
import {
  startRecordingProxy,
  type RecordedExchange,
  type RecordingProxy,
} from '../support/recording-proxy';

/** A fetch that records every answer the SDK (or the test) gets, body included. */
function recordingFetch(exchanges: RecordedExchange[]): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    const text = await response.clone().text();
    exchanges.push({
      method: init.method ?? 'GET',
      path: new URL(url).pathname,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: text ? (JSON.parse(text) as unknown) : undefined,
    });
    return response;
  };
}

/** Whatever the SDK throws on a refusal: the recorded answer is what the test checks. */
const refused = (promise: Promise<unknown>): Promise<unknown> =>
  promise.catch((error: unknown) => error);

/**
 * The served OpenAPI document against the real journey: two players sign in, probe, queue,
 * heartbeat, get matched, read their assignment, join the reference game server and finish a duel;
 * the game server reports through a recording proxy; refusals are provoked on the way. Every answer
 * (status, media type, body) must be the one the document declares for its path and method.
 */
describe('OpenAPI document against the real journey', () => {
  const options: ControlPlaneOptions = { apis: 1 };
  let serverProxy: RecordingProxy | undefined;
  // Registered before the plane's own beforeAll: the game servers report through the proxy.
  beforeAll(async () => {
    serverProxy = await startRecordingProxy(() => plane.apiUrl(0));
    options.appEnv = { allocator: { ALLOCATOR_API_URL: serverProxy.url } };
  });
  const plane = useControlPlane(options);
  const games: GameConnection[] = [];
  const sockets: WebSocket[] = [];
  afterAll(async () => {
    for (const game of games) game.close();
    for (const socket of sockets) socket.close();
    await serverProxy?.close();
  });

  it('every answer of players and game servers keeps the documented contract', () =>
    plane.diagnose(async () => {
      const baseUrl = plane.apiUrl(0);
      const document = (await (
        await fetch(`${baseUrl}/v1/openapi.json`)
      ).json()) as OpenApiDocument;
      const validator = new OpenApiValidator(document);
      const exchanges: RecordedExchange[] = [];
      const record = recordingFetch(exchanges);
      const [a, b] = [0, 1].map(() => new PlayerClient({ baseUrl, fetch: record }));
      if (!a || !b) throw new Error('two players');
      const raw = (path: string, init: RequestInit = {}, token = a.token) =>
        record(`${baseUrl}${path}`, {
          ...init,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(init.body ? { 'content-type': 'application/json' } : {}),
            ...(init.headers as Record<string, string> | undefined),
          },
        });

      // Refusals before signing in.
      await raw('/v1/queue/options', {}, undefined);
      await raw(
        '/v1/sessions',
        { method: 'POST', body: '{"provider":"no-such-provider"}' },
        undefined,
      );

      const sessions = [];
      for (const client of [a, b]) {
        sessions.push(await client.createSession());
        await client.probeAll(['eu-west'], { samples: 1 });
      }
      // A block added, listed and removed (a and b must meet below), and an unknown player.
      const other = sessions[1]?.playerId ?? '';
      expect((await a.blockPlayer(other)).blocked.map((entry) => entry.playerId)).toEqual([other]);
      await a.blockList();
      expect((await a.unblockPlayer(other)).blocked).toEqual([]);
      await refused(a.blockPlayer(randomUUID()));
      // Likewise an avoid.
      expect((await a.avoids.add(other)).avoided.map((entry) => entry.playerId)).toEqual([other]);
      await a.avoids.list();
      expect((await a.avoids.remove(other)).avoided).toEqual([]);
      await refused(a.avoids.add(randomUUID()));
      // A party made and disbanded (neither player is in one when queueing), and a bad invite.
      await a.createParty();
      await a.party();
      await refused(b.joinParty('not-an-invite-code'));
      await a.disbandParty();
      // A lobby joined, arranged and closed, and its refusals (neither player stays in it).
      const lobby = await a.lobbies.create({ mode: 'duel' });
      await b.lobbies.join(lobby.inviteCode ?? '');
      await a.lobbies.setTeams([[b.session?.playerId ?? ''], [a.session?.playerId ?? '']]);
      await b.lobbies.current();
      await refused(b.lobbies.start());
      await refused(a.lobbies.create({ mode: 'duel', region: 'no-such-region' }));
      await refused(b.lobbies.join(`mpl_${'A'.repeat(22)}`));
      await b.lobbies.leave();
      await a.lobbies.leave();

      // Queue refusals: no Idempotency-Key, an unknown mode, a ticket that does not exist.
      await raw('/v1/queue/tickets', { method: 'POST', body: '{"mode":"duel"}' });
      await raw('/v1/queue/tickets', {
        method: 'POST',
        body: '{"mode":"no-such-mode"}',
        headers: { 'idempotency-key': randomUUID() },
      });
      await raw(`/v1/queue/tickets/${randomUUID()}`);

      // Player a's notification socket, raw: every frame is checked against docs/asyncapi.yaml.
      const frames: unknown[] = [];
      const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/notifications`, {
        headers: { authorization: `Bearer ${a.token ?? ''}` },
      });
      sockets.push(socket);
      socket.on('message', (data: WebSocket.RawData) =>
        frames.push(JSON.parse((data as Buffer).toString('utf8')) as unknown),
      );
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(JSON.stringify({ type: 'resume', matches: {} }));
      socket.send('{"type":"no-such-message"}');

      const tickets = [await a.enqueue('duel'), await b.enqueue('duel')];
      await Promise.all([a.heartbeat(tickets[0]?.id ?? ''), b.heartbeat(tickets[1]?.id ?? '')]);
      // The same ticket read under the /api/v1 alias.
      await raw(`/api/v1/queue/tickets/${tickets[0]?.id ?? ''}`);
      const heartbeats = [a, b].map((client, i) => client.startHeartbeats(tickets[i]?.id ?? ''));
      try {
        const matched = await Promise.all(
          [a, b].map((client, i) =>
            client.waitForTicket(tickets[i]?.id ?? '', (t) => t.state !== 'SEARCHING', {
              timeoutMs: 60_000,
              pollMs: 200,
            }),
          ),
        );
        const matchId = matched[0]?.matchId ?? '';
        expect(matched.map((t) => t.matchId)).toEqual([matchId, matchId]);
        const assignments = await Promise.all(
          [a, b].map((client) =>
            client.waitForAssignment(matchId, { timeoutMs: 60_000, pollMs: 100 }),
          ),
        );
        games.push(
          ...(await Promise.all(
            assignments.map((assignment, i) => [a, b][i]!.joinMatch(assignment)),
          )),
        );
        await Promise.all(games.map((game) => withTimeout(game.ended, 60_000, 'the game to end')));
        await Promise.all(
          [a, b].map((client, i) =>
            client.waitForTicket(tickets[i]?.id ?? '', (t) => t.state === 'COMPLETED', {
              timeoutMs: 60_000,
              pollMs: 200,
            }),
          ),
        );
        // After the match: its events, the history, and refusals on the finished ticket.
        await a.matchEvents(matchId, 0);
        await raw('/v1/matches/history');
        await raw(`/v1/matches/${randomUUID()}/assignment`);
      } finally {
        for (const handle of heartbeats) handle.stop();
      }
      await refused(a.heartbeat(tickets[0]?.id ?? ''));
      await refused(a.cancel(tickets[0]?.id ?? ''));
      await a.endSession();

      const failures = exchanges.flatMap((exchange) => validator.check(exchange));
      expect(failures).toEqual([]);
      for (const expected of [
        'GET /v1/queue/options 401',
        'POST /v1/sessions 400',
        'POST /v1/sessions 201',
        'GET /v1/queue/options 200',
        'POST /v1/probes/{region}/challenge 201',
        'POST /v1/probes/{region}/answer 200',
        'POST /v1/parties 201',
        'GET /v1/parties/current 200',
        'POST /v1/parties/join 400',
        'DELETE /v1/parties/current 204',
        'PUT /v1/blocks/{playerId} 200',
        'GET /v1/blocks 200',
        'DELETE /v1/blocks/{playerId} 200',
        'PUT /v1/blocks/{playerId} 404',
        'POST /v1/lobbies 201',
        'POST /v1/lobbies/join 200',
        'POST /v1/lobbies/current/teams 200',
        'GET /v1/lobbies/current 200',
        'POST /v1/lobbies/current/start 403',
        'POST /v1/lobbies 422',
        'POST /v1/lobbies/join 404',
        'POST /v1/lobbies/current/leave 204',
        'POST /v1/queue/tickets 400',
        'POST /v1/queue/tickets 422',
        'GET /v1/queue/tickets/{id} 404',
        'POST /v1/queue/tickets 201',
        'POST /v1/queue/tickets/{id}/heartbeat 200',
        'GET /api/v1/queue/tickets/{id} 200',
        'GET /v1/queue/tickets/{id} 200',
        'GET /v1/matches/{id}/assignment 200',
        'GET /v1/matches/{id}/assignment 404',
        'GET /v1/matches/{id}/events 200',
        'GET /v1/matches/history 200',
        'POST /v1/queue/tickets/{id}/heartbeat 409',
        'DELETE /v1/queue/tickets/{id} 409',
        'DELETE /v1/sessions/current 204',
      ]) {
        expect(validator.covered).toContain(expected);
      }

      // The sockets: the notification frames (ready, the error, every match state) and the game
      // server's messages, each as docs/asyncapi.yaml describes it.
      const checkFrame = asyncApiFrameChecker();
      const gameFrames = games.flatMap((game) => [
        { type: 'joined', playerId: game.playerId, team: game.team },
        ...game.messages,
      ]);
      expect([...frames, ...gameFrames].flatMap(checkFrame)).toEqual([]);
      const frameTypes = new Set(
        [...frames, ...gameFrames].map((f) => (f as { type: string }).type),
      );
      expect([...frameTypes].sort()).toEqual(
        ['ended', 'error', 'event', 'joined', 'ready', 'started', 'tick'].sort(),
      );

      // The game server's calls, through the proxy.
      const serverExchanges = serverProxy?.exchanges ?? [];
      expect(serverExchanges.flatMap((exchange) => validator.check(exchange))).toEqual([]);
      for (const expected of [
        'POST /v1/servers/{id}/register 200',
        'GET /v1/servers/{id}/roster 200',
        'POST /v1/servers/{id}/initial-connect 200',
        'POST /v1/servers/{id}/result 200',
      ]) {
        expect(validator.covered).toContain(expected);
      }
    }));
});
