import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  ErrorCode,
  type AssignmentResponse,
  type MatchEventsResponse,
} from '@matchplane/contracts';
import {
  GameCloseCode,
  GameConnectError,
  GameConnection,
  GameConnectionClosedError,
  GameJoinRefusedError,
  type GameServerMessage,
} from './game-connection';
import { type FetchLike } from './http.transport';
import {
  AssignmentUnavailableError,
  AssignmentWaitTimeoutError,
  PlayerClient,
} from './player-client';
import { MatchplaneApiError } from './sdk.errors';

const MATCH = '7d0e3b0c-8f1e-4c55-9a51-0b7f0a3c1d2e';
const TOKEN = 'mpj_claims.mac';

interface Peer {
  socket: WebSocket;
  request: IncomingMessage;
  received: string[];
}

/** A scripted stand-in for the game server's `/join` listener: the test says what it sends. */
class ScriptedGameServer {
  readonly peers: Peer[] = [];
  private readonly http: Server;
  private readonly sockets: WebSocketServer;
  private waiters: (() => void)[] = [];

  constructor() {
    this.http = createServer((_req, res) => res.writeHead(426).end());
    this.sockets = new WebSocketServer({ server: this.http, path: '/join' });
    this.sockets.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      const peer: Peer = { socket, request, received: [] };
      socket.on('message', (data) => {
        peer.received.push((data as Buffer).toString('utf8'));
        this.notify();
      });
      this.peers.push(peer);
      this.notify();
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
  }

  get endpoint(): string {
    return `127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  /** The first connection once it has sent its join message. */
  async joining(): Promise<Peer> {
    await this.until(() => (this.peers[0]?.received.length ?? 0) > 0);
    return this.peers[0]!;
  }

  send(peer: Peer, ...messages: GameServerMessage[]): void {
    for (const message of messages) peer.socket.send(JSON.stringify(message));
  }

  async close(): Promise<void> {
    for (const client of this.sockets.clients) client.terminate();
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

const joined = (team = 1): GameServerMessage => ({ type: 'joined', playerId: 'p-1', team });

describe(GameConnection.name, () => {
  let server: ScriptedGameServer;

  beforeEach(async () => {
    server = new ScriptedGameServer();
    await server.listen();
  });

  afterEach(async () => {
    await server.close();
  });

  const join = (options: Parameters<typeof GameConnection.join>[1] = {}) =>
    GameConnection.join({ endpoint: server.endpoint, joinToken: TOKEN }, options);

  it('sends the join message on /join, resolves on joined, then records the match and its end', async () => {
    const seen: GameServerMessage[] = [];
    const connecting = join({ onMessage: (message) => seen.push(message) });
    const peer = await server.joining();
    expect(peer.request.url).toBe('/join');
    // The token travels in the message, never in the URL.
    expect(JSON.parse(peer.received[0]!)).toEqual({ type: 'join', token: TOKEN });
    // `started` in the same burst as `joined` is not lost.
    server.send(peer, joined(1), { type: 'started', durationMs: 1000 });
    const connection = await connecting;
    expect(connection).toMatchObject({ playerId: 'p-1', team: 1 });

    server.send(
      peer,
      { type: 'tick', seq: 1, remainingMs: 500 },
      { type: 'tick', seq: 2, remainingMs: 0 },
      { type: 'ended', outcome: 'COMPLETED', winningTeam: 1 },
    );
    await expect(connection.ended).resolves.toEqual({ outcome: 'COMPLETED', winningTeam: 1 });
    peer.socket.close(GameCloseCode.NORMAL, 'match over');
    await expect(connection.closed).resolves.toEqual({ code: 1000, reason: 'match over' });
    expect(connection.ticks().map((tick) => tick.seq)).toEqual([1, 2]);
    expect(connection.messages.map((m) => m.type)).toEqual(['started', 'tick', 'tick', 'ended']);
    expect(seen).toEqual(connection.messages);
  });

  it('reports a FAILED end without a winning team', async () => {
    const connecting = join();
    const peer = await server.joining();
    server.send(peer, joined(0), { type: 'ended', outcome: 'FAILED' });
    await expect((await connecting).ended).resolves.toEqual({ outcome: 'FAILED' });
  });

  it.each([
    [GameCloseCode.INVALID_TOKEN, 'invalid join token: EXPIRED'],
    [GameCloseCode.NOT_ON_ROSTER, 'player is not on the roster'],
    [GameCloseCode.JOINING_CLOSED, 'joining is closed'],
  ])('rejects a refusal with its close code %i and reason', async (code, reason) => {
    const connecting = join();
    const peer = await server.joining();
    peer.socket.close(code, reason);
    const err = await rejection(connecting);
    expect(err).toBeInstanceOf(GameJoinRefusedError);
    expect(err).toMatchObject({ code, reason });
    expect(err.message).toContain(`(${code}): ${reason}`);
  });

  it('rejects `ended` when the connection closes before the match ended', async () => {
    const connecting = join();
    const peer = await server.joining();
    server.send(peer, joined(), { type: 'started', durationMs: 1000 });
    const connection = await connecting;
    peer.socket.close(GameCloseCode.GOING_AWAY, 'server shutting down');
    const err = await rejection(connection.ended);
    expect(err).toBeInstanceOf(GameConnectionClosedError);
    expect(err).toMatchObject({ code: 1001, reason: 'server shutting down' });
  });

  it('closes on request: the server sees the close, `ended` rejects, close is idempotent', async () => {
    const connecting = join();
    const peer = await server.joining();
    server.send(peer, joined());
    const connection = await connecting;
    const peerClosed = new Promise<number>((resolve) =>
      peer.socket.once('close', (code: number) => resolve(code)),
    );
    connection.close();
    connection.close();
    expect(await peerClosed).toBe(1000);
    await expect(connection.closed).resolves.toMatchObject({ code: 1000 });
    await expect(connection.ended).rejects.toBeInstanceOf(GameConnectionClosedError);
  });

  it('survives a throwing message listener and ignores frames that are not messages', async () => {
    const connecting = join({
      onMessage: () => {
        throw new Error('listener bug');
      },
    });
    const peer = await server.joining();
    server.send(peer, joined());
    const connection = await connecting;
    peer.socket.send('not json');
    peer.socket.send('"a string"');
    server.send(
      peer,
      { type: 'tick', seq: 1, remainingMs: 0 },
      { type: 'ended', outcome: 'FAILED' },
    );
    await expect(connection.ended).resolves.toEqual({ outcome: 'FAILED' });
    expect(connection.messages.map((m) => m.type)).toEqual(['tick', 'ended']);
  });

  it('fails with GameConnectError when nothing listens at the endpoint', async () => {
    const endpoint = server.endpoint;
    await server.close();
    server = new ScriptedGameServer(); // for afterEach
    await server.listen();
    const err = await rejection(GameConnection.join({ endpoint, joinToken: TOKEN }));
    expect(err).toBeInstanceOf(GameConnectError);
    expect(err).toMatchObject({ timedOut: false, url: `ws://${endpoint}/join` });
  });

  it('gives up after joinTimeoutMs when the server never answers the join', async () => {
    const connecting = join({ joinTimeoutMs: 100 });
    const peer = await server.joining();
    const peerClosed = new Promise<void>((resolve) => peer.socket.once('close', () => resolve()));
    const err = await rejection(connecting);
    expect(err).toBeInstanceOf(GameConnectError);
    expect(err).toMatchObject({ timedOut: true });
    await peerClosed; // the socket was dropped, not left open
  });

  it('builds ws:// or wss:// URLs for host:port and bracketed IPv6 endpoints', () => {
    expect(GameConnection.url('127.0.0.1:7000')).toBe('ws://127.0.0.1:7000/join');
    expect(GameConnection.url('[::1]:7000', 'wss')).toBe('wss://[::1]:7000/join');
  });
});

describe('PlayerClient: assignment, joining and notifications', () => {
  const BASE_URL = 'http://mm.test:8080';
  const assignment: AssignmentResponse = {
    matchId: MATCH,
    state: 'ASSIGNMENT_READY',
    region: 'eu-west',
    serverRegion: 'eu-west',
    serverId: 'local-1',
    endpoint: '127.0.0.1:7000',
    team: 0,
    joinToken: TOKEN,
    expiresAt: '2025-01-01T00:10:00.000Z',
  };
  const json = (status: number, body: unknown): Response =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' },
    });
  const notReady = () =>
    json(409, {
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      code: ErrorCode.ASSIGNMENT_NOT_READY,
    });
  const events = (state: string, revision: number): MatchEventsResponse => ({
    matchId: MATCH,
    state,
    revision,
    messages: [],
  });

  /** Answers by path; records every path asked for. */
  function routed(routes: Record<string, (() => Response)[]>): {
    fetch: FetchLike;
    paths: string[];
  } {
    const paths: string[] = [];
    const fetch: FetchLike = (url) => {
      const path = url.replace(`${BASE_URL}/v1/`, '');
      paths.push(path);
      const key = Object.keys(routes).find((prefix) => path.startsWith(prefix));
      const replies = key === undefined ? undefined : routes[key];
      const reply = replies && (replies.length > 1 ? replies.shift() : replies[0]);
      if (!reply) throw new Error(`unexpected call ${path}`);
      return Promise.resolve(reply());
    };
    return { fetch, paths };
  }

  it('assignment GETs matches/{id}/assignment with the session token', async () => {
    let authorization: string | undefined;
    const fetch: FetchLike = (url, init) => {
      authorization = (init.headers as Record<string, string>).authorization;
      expect(url).toBe(`${BASE_URL}/v1/matches/${MATCH}/assignment`);
      return Promise.resolve(json(200, assignment));
    };
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch });
    await expect(client.assignment(MATCH)).resolves.toEqual(assignment);
    expect(authorization).toBe('Bearer tok');
  });

  it('waitForAssignment polls while 409 ASSIGNMENT_NOT_READY, fetching only new match events', async () => {
    const { fetch, paths } = routed({
      [`matches/${MATCH}/assignment`]: [notReady, notReady, () => json(200, assignment)],
      [`matches/${MATCH}/events`]: [
        () => json(200, events('ALLOCATING', 1)),
        () => json(200, events('PROCESS_READY', 2)),
      ],
    });
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch });
    await expect(client.waitForAssignment(MATCH, { pollMs: 1 })).resolves.toEqual(assignment);
    expect(paths).toEqual([
      `matches/${MATCH}/assignment`,
      `matches/${MATCH}/events?after=0`,
      `matches/${MATCH}/assignment`,
      `matches/${MATCH}/events?after=1`,
      `matches/${MATCH}/assignment`,
    ]);
  });

  it('waitForAssignment stops at once when the match ended without an assignment', async () => {
    const { fetch } = routed({
      [`matches/${MATCH}/assignment`]: [notReady],
      [`matches/${MATCH}/events`]: [() => json(200, events('FAILED', 2))],
    });
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch });
    const err = await rejection(client.waitForAssignment(MATCH, { pollMs: 1 }));
    expect(err).toBeInstanceOf(AssignmentUnavailableError);
    expect(err).toMatchObject({ matchId: MATCH, state: 'FAILED' });
  });

  it('waitForAssignment stops at once on 410 MATCH_ENDED, with the end reason', async () => {
    const { fetch, paths } = routed({
      [`matches/${MATCH}/assignment`]: [
        notReady,
        () =>
          json(410, {
            type: 'about:blank',
            title: 'Gone',
            status: 410,
            code: ErrorCode.MATCH_ENDED,
            matchState: 'FAILED',
            endReason: 'NO_SHOW',
          }),
      ],
      [`matches/${MATCH}/events`]: [() => json(200, events('ASSIGNMENT_READY', 3))],
    });
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch });
    const err = await rejection(client.waitForAssignment(MATCH, { pollMs: 1 }));
    expect(err).toBeInstanceOf(AssignmentUnavailableError);
    expect(err).toMatchObject({ matchId: MATCH, state: 'FAILED', reason: 'NO_SHOW' });
    expect(paths.filter((path) => path.includes('/assignment'))).toHaveLength(2);
  });

  it('waitForAssignment gives up after timeoutMs and throws other API errors at once', async () => {
    const slow = routed({
      [`matches/${MATCH}/assignment`]: [notReady],
      [`matches/${MATCH}/events`]: [() => json(200, events('ALLOCATING', 1))],
    });
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch: slow.fetch });
    const timedOut = await rejection(client.waitForAssignment(MATCH, { timeoutMs: 30, pollMs: 5 }));
    expect(timedOut).toBeInstanceOf(AssignmentWaitTimeoutError);
    expect(timedOut).toMatchObject({ lastState: 'ALLOCATING' });

    const missing = routed({
      [`matches/${MATCH}/assignment`]: [
        () =>
          json(404, {
            type: 'about:blank',
            title: 'Not Found',
            status: 404,
            code: ErrorCode.NOT_FOUND,
          }),
      ],
    });
    const other = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch: missing.fetch });
    const notFound = await rejection(other.waitForAssignment(MATCH, { pollMs: 1 }));
    expect(notFound).toBeInstanceOf(MatchplaneApiError);
    expect(notFound).toMatchObject({ status: 404 });
    expect(missing.paths).toHaveLength(1);
  });

  it('matchEvents asks for the history after a revision and refuses a bad one', async () => {
    const { fetch, paths } = routed({
      [`matches/${MATCH}/events`]: [() => json(200, events('IN_PROGRESS', 4))],
    });
    const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok', fetch });
    await expect(client.matchEvents(MATCH, 3)).resolves.toMatchObject({ state: 'IN_PROGRESS' });
    expect(paths).toEqual([`matches/${MATCH}/events?after=3`]);
    expect(() => client.matchEvents(MATCH, -1)).toThrow('non-negative');
  });

  it('joinMatch joins the assignment endpoint with its token', async () => {
    const server = new ScriptedGameServer();
    await server.listen();
    try {
      const client = new PlayerClient({ baseUrl: BASE_URL, token: 'tok' });
      const connecting = client.joinMatch({ ...assignment, endpoint: server.endpoint });
      const peer = await server.joining();
      expect(JSON.parse(peer.received[0]!)).toEqual({ type: 'join', token: TOKEN });
      server.send(peer, { type: 'joined', playerId: 'p-1', team: 0 });
      await expect(connecting).resolves.toMatchObject({ playerId: 'p-1', team: 0 });
    } finally {
      await server.close();
    }
  });

  it('subscribe connects to the client base URL with the token current at each connect', async () => {
    const sockets = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => sockets.once('listening', resolve));
    const requests: IncomingMessage[] = [];
    sockets.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      requests.push(request);
      if (requests.length === 1) return socket.close(1001, 'going away');
      socket.send(
        JSON.stringify({
          type: 'ready',
          playerId: 'p-1',
          bufferLimit: 8,
          heartbeatIntervalMs: 30_000,
        }),
      );
    });
    try {
      const baseUrl = `http://127.0.0.1:${(sockets.address() as AddressInfo).port}`;
      const client = new PlayerClient({ baseUrl, token: 'first' });
      const subscription = client.subscribe(
        {
          onEvent: () => undefined,
          onConnection: (event) => {
            if (event.state === 'reconnecting') client.setToken('second');
          },
        },
        { reconnect: { baseDelayMs: 5, maxDelayMs: 10 } },
      );
      await subscription.ready;
      expect(requests.map((r) => [r.url, r.headers.authorization])).toEqual([
        ['/v1/notifications', 'Bearer first'],
        ['/v1/notifications', 'Bearer second'],
      ]);
      subscription.close();
      await expect(subscription.done).resolves.toEqual({ reason: 'closed' });
    } finally {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    }
  });
});
