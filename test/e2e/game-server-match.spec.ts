import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import {
  ServerRoutes,
  type BackfillAcceptRequest,
  type BackfillConnectRequest,
  type BackfillConnectResponse,
  type BackfillRequestBody,
  type BackfillResponse,
  type InitialConnectRequest,
  type InitialConnectResponse,
  type MatchResultRequest,
  type JoinServerMessage as ServerMessage,
  type RosterResponse,
} from '@matchplane/contracts';
import { JoinTokenSigner } from '@matchplane/join-auth';
import { GameConnection, GameJoinRefusedError } from '@matchplane/sdk';
import {
  newRosterRevision,
  newSignedRoster,
  newTestKeys,
} from '../../apps/game-server/src/game-server.factories';
import { freePort, startApp, waitFor, type RunningApp } from '../support/processes';

/** The routes of the match itself (one path per server). */
type MatchRoute = 'register' | 'roster' | 'initialConnect' | 'result' | 'heartbeat';
const SERVER_ID = 'gs-e2e-1';
const CREDENTIAL = 'mp_srv_e2e_workload_credential_value';
const { keys, file: keyFile } = newTestKeys('mp-e2e-1');
const signer = new JoinTokenSigner(keys, 'mp-e2e-1');

interface RecordedCall {
  method: string;
  path: string;
  body: unknown;
}

/**
 * The control plane's server routes as libs/contracts/src/server-api.ts describes them, answered
 * from memory: it serves the roster the test signed and records what the game server reports.
 * A backfill request stays OPEN unless the test planned one: then its first poll finds it MATCHED
 * with the planned revision's added players, the second PUBLISHED, and the roster route serves
 * that revision from then on.
 */
class ControlPlaneStandIn {
  readonly calls: RecordedCall[] = [];
  private readonly server: Server;
  /** Routes that answer 503 for a while from their first call (the database restarting). */
  private readonly outages = new Map<string, { ms: number; endsAt?: number }>();
  private readonly backfills = new Map<string, BackfillResponse>();
  private plannedRevision: RosterResponse | undefined;
  /** Set: the match was ended without this server (heartbeats refused 401 ALLOCATION_ENDED). */
  private matchEnded = false;

  constructor(private roster: RosterResponse) {
    this.server = createServer((req, res) => {
      void this.answer(req).then(({ status, body }) => {
        const type = status >= 400 ? 'application/problem+json' : 'application/json';
        res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
      });
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** `route` answers 503 DEPENDENCY_UNAVAILABLE for `ms` from its first call on. */
  outage(route: MatchRoute, ms: number): void {
    this.outages.set(`/v1/${ServerRoutes[route](SERVER_ID)}`, { ms });
  }

  /** The control plane ends the match without the server (as SERVER_LOST does): its credential ends. */
  endMatch(): void {
    this.matchEnded = true;
  }

  /** The next backfill request is filled by publishing `revision` (signed, or tampered with). */
  planBackfill(revision: RosterResponse): void {
    this.plannedRevision = revision;
  }

  /** Backfill calls as `METHOD last-path-segment` (the request id for GET and DELETE), with bodies. */
  backfillCalls(): { call: string; body: unknown }[] {
    const prefix = `/v1/${ServerRoutes.backfills(SERVER_ID)}`;
    return this.calls
      .filter((c) => c.path.startsWith(prefix))
      .map((c) => ({ call: `${c.method} ${c.path.slice(prefix.length) || '/'}`, body: c.body }));
  }

  callsTo(route: MatchRoute): RecordedCall[] {
    const routePath = `/v1/${ServerRoutes[route](SERVER_ID)}`;
    return this.calls.filter((call) => call.path === routePath);
  }

  private async answer(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const call = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
    if (call.path === '/health') return { status: 200, body: { status: 'ok' } };
    this.calls.push(call);
    if (req.headers.authorization !== `Bearer ${CREDENTIAL}`) {
      return problem(401, 'UNAUTHENTICATED');
    }
    if (this.matchEnded) return problem(401, 'ALLOCATION_ENDED');
    const outage = this.outages.get(call.path);
    if (outage) {
      outage.endsAt ??= Date.now() + outage.ms;
      if (Date.now() < outage.endsAt) return problem(503, 'DEPENDENCY_UNAVAILABLE');
    }
    const { matchId } = this.roster;
    const route = `${call.method} ${call.path}`;
    if (route === `GET /v1/${ServerRoutes.roster(SERVER_ID)}`) {
      return { status: 200, body: this.roster };
    }
    if (route === `POST /v1/${ServerRoutes.register(SERVER_ID)}`) {
      return {
        status: 200,
        body: { matchId, serverId: SERVER_ID, state: 'ASSIGNMENT_READY', revision: 3 },
      };
    }
    if (route === `POST /v1/${ServerRoutes.initialConnect(SERVER_ID)}`) {
      const { connectedPlayerIds } = call.body as InitialConnectRequest;
      const body: InitialConnectResponse = {
        matchId,
        state: connectedPlayerIds.length > 0 ? 'IN_PROGRESS' : 'FAILED',
        revision: 4,
        noShowPlayerIds: this.roster.entries
          .map((entry) => entry.playerId)
          .filter((id) => !connectedPlayerIds.includes(id)),
      };
      return { status: 200, body };
    }
    if (route === `POST /v1/${ServerRoutes.result(SERVER_ID)}`) {
      return { status: 200, body: { matchId, state: 'COMPLETED', revision: 5 } };
    }
    if (route === `POST /v1/${ServerRoutes.heartbeat(SERVER_ID)}`) {
      return { status: 200, body: { matchId, serverId: SERVER_ID } };
    }
    if (route === `POST /v1/${ServerRoutes.backfills(SERVER_ID)}`) {
      const { team, slots } = call.body as BackfillRequestBody;
      const request: BackfillResponse = {
        requestId: randomUUID(),
        matchId,
        team,
        slots,
        state: 'OPEN',
        expiresAt: new Date(Date.now() + 30_000).toISOString(),
        playerIds: [],
        revision: 1,
      };
      this.backfills.set(request.requestId, request);
      return { status: 201, body: request };
    }
    return this.answerBackfill(call);
  }

  private answerBackfill(call: RecordedCall): { status: number; body: unknown } {
    const [requestId = '', action] = call.path
      .slice(`/v1/${ServerRoutes.backfills(SERVER_ID)}/`.length)
      .split('/');
    const request = this.backfills.get(decodeURIComponent(requestId));
    if (request === undefined) return problem(404, 'NOT_FOUND');
    const next = (changes: Partial<BackfillResponse>): BackfillResponse => {
      const updated = { ...request, ...changes, revision: request.revision + 1 };
      this.backfills.set(request.requestId, updated);
      return updated;
    };
    const planned = this.plannedRevision;
    const route = `${call.method} ${action ?? ''}`;
    if (route === 'GET ') {
      if (planned === undefined || !['OPEN', 'MATCHED'].includes(request.state)) {
        return { status: 200, body: request };
      }
      if (request.state === 'OPEN') {
        const held = new Set(this.roster.entries.map((entry) => entry.playerId));
        const added = planned.entries.map((e) => e.playerId).filter((id) => !held.has(id));
        return { status: 200, body: next({ state: 'MATCHED', playerIds: added }) };
      }
      this.roster = planned;
      return {
        status: 200,
        body: next({ state: 'PUBLISHED', rosterRevision: planned.revision }),
      };
    }
    if (route === 'DELETE ') {
      if (['ASSIGNED', 'FILLED'].includes(request.state)) return problem(409, 'BACKFILL_CONFLICT');
      return { status: 200, body: next({ state: 'CANCELLED', reason: 'SERVER_CANCELLED' }) };
    }
    if (route === 'POST accept') {
      const { rosterRevision } = call.body as BackfillAcceptRequest;
      if (request.state !== 'PUBLISHED' || rosterRevision !== request.rosterRevision) {
        return problem(409, 'BACKFILL_CONFLICT');
      }
      return { status: 200, body: next({ state: 'ASSIGNED' }) };
    }
    if (route === 'POST connect') {
      const { connectedPlayerIds } = call.body as BackfillConnectRequest;
      if (request.state !== 'ASSIGNED') return problem(409, 'BACKFILL_CONFLICT');
      const body: BackfillConnectResponse = {
        ...next({ state: 'FILLED' }),
        noShowPlayerIds: request.playerIds.filter((id) => !connectedPlayerIds.includes(id)),
      };
      return { status: 200, body };
    }
    return problem(404, 'NOT_FOUND');
  }
}

function problem(status: number, code: string): { status: number; body: unknown } {
  return { status, body: { type: 'about:blank', title: code, status, code } };
}

/** Every client socket a test opened, terminated after it. */
const clients = new Set<WebSocket>();

function connect(port: number): WebSocket {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/join`);
  clients.add(socket);
  return socket;
}

interface Player {
  messages: ServerMessage[];
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
}

/** Connects to the game server and sends the join message with `token`. */
async function join(port: number, token: string): Promise<Player> {
  const socket = connect(port);
  const messages: ServerMessage[] = [];
  socket.on('message', (data: Buffer) =>
    messages.push(JSON.parse(data.toString()) as ServerMessage),
  );
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await once(socket, 'open');
  socket.send(JSON.stringify({ type: 'join', token }));
  return { messages, closed, socket };
}

function joined(player: Player): Promise<ServerMessage> {
  return waitFor(() => Promise.resolve(player.messages.find((m) => m.type === 'joined')), {
    timeoutMs: 5_000,
    what: 'the joined message',
  });
}

async function exitWithin(app: RunningApp, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`game server still running after ${ms} ms:\n${app.output()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([app.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('game server (reference dedicated server) against a control-plane stand-in', () => {
  let dir: string;
  let keysPath: string;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mp-gs-e2e-'));
    keysPath = path.join(dir, 'join-keys.json');
    writeFileSync(keysPath, JSON.stringify(keyFile));
  });

  afterEach(async () => {
    for (const socket of clients) socket.terminate();
    clients.clear();
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A duel for this server: one player per team, tokens signed for `port`. */
  function duel(port: number): RosterResponse {
    return newSignedRoster({
      signer,
      serverId: SERVER_ID,
      endpoint: `127.0.0.1:${port}`,
      players: [{ team: 0 }, { team: 1 }],
    });
  }

  async function launch(
    published: RosterResponse,
    port: number,
    env: Record<string, string> = {},
    api = new ControlPlaneStandIn(published),
  ): Promise<{ app: RunningApp; api: ControlPlaneStandIn }> {
    const apiUrl = await api.listen();
    const app = startApp('game-server', {
      LOG_FORMAT: 'json',
      MATCHPLANE_API_URL: apiUrl,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      MATCHPLANE_SERVER_ID: SERVER_ID,
      MATCHPLANE_SERVER_CREDENTIAL: CREDENTIAL,
      MATCHPLANE_MATCH_ID: published.matchId,
      MATCHPLANE_JOIN_KEYS_FILE: keysPath,
      MATCHPLANE_SERVER_PORT: String(port),
      CONNECT_DEADLINE_MS: '5000',
      MATCH_DURATION_MS: '600',
      MATCH_TICK_INTERVAL_MS: '100',
      ...env,
    });
    cleanups.push(
      () => app.stop('SIGKILL'),
      () => api.close(),
    );
    return { app, api };
  }

  function registered(api: ControlPlaneStandIn, app: RunningApp): Promise<true> {
    return waitFor(() => Promise.resolve(api.callsTo('register').length > 0 ? true : undefined), {
      timeoutMs: 20_000,
      what: `the game server to register; output:\n${app.output()}`,
    });
  }

  it('plays a match: register, both players join, initial-connect with both, result COMPLETED, exit 0', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, { SERVER_HEARTBEAT_INTERVAL_MS: '100' });
    await registered(api, app);

    // HEALTH_PORT=0: the listener logs the port it got, and keeps answering during the match.
    const healthUrl = /health and metrics on (http:\/\/[\d.:]+\/health)/.exec(app.output())?.[1];
    const health = await fetch(healthUrl ?? 'http://127.0.0.1:1/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ details: { 'matchplane-api': { status: 'up' } } });

    const players = await Promise.all(roster.entries.map((entry) => join(port, entry.joinToken)));
    const joins = await Promise.all(players.map(joined));
    expect(joins).toEqual(
      roster.entries.map((entry) => ({
        type: 'joined',
        playerId: entry.playerId,
        team: entry.team,
      })),
    );

    const closes = await Promise.all(players.map((player) => player.closed));
    expect(await exitWithin(app, 10_000)).toBe(0);

    expect(closes).toEqual([
      { code: 1000, reason: 'match ended' },
      { code: 1000, reason: 'match ended' },
    ]);
    for (const player of players) {
      const types = player.messages.map((m) => m.type);
      expect(types[0]).toBe('joined');
      expect(types[1]).toBe('started');
      expect(types.filter((t) => t === 'tick').length).toBeGreaterThanOrEqual(3);
      expect(player.messages.at(-1)).toEqual({
        type: 'ended',
        outcome: 'COMPLETED',
        winningTeam: 0,
      });
    }

    expect(api.callsTo('roster')).toHaveLength(1);
    expect(api.callsTo('register').map((c) => c.body)).toEqual([
      { protocolVersion: 1, imageDigest: 'unversioned' },
    ]);
    expect(api.callsTo('initialConnect').map((c) => c.body)).toEqual([
      { connectedPlayerIds: roster.entries.map((entry) => entry.playerId).sort() },
    ]);
    const results = api.callsTo('result').map((c) => c.body as MatchResultRequest);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ outcome: 'COMPLETED', winningTeam: 0 });
    expect(Object.keys(results[0]?.scores ?? {}).sort()).toEqual(
      roster.entries.map((entry) => entry.playerId).sort(),
    );
    // The route order DESIGN.md describes, nothing else, with heartbeats by themselves throughout.
    const routes = api.calls.map((c) => c.path.split('/').at(-1));
    expect(routes.filter((route) => route !== 'heartbeat')).toEqual([
      'roster',
      'register',
      'initial-connect',
      'result',
    ]);
    expect(api.callsTo('heartbeat').length).toBeGreaterThanOrEqual(3);
    expect(routes.indexOf('heartbeat')).toBeLessThan(routes.indexOf('initial-connect'));

    const output = app.output();
    expect(output).toMatch(/roster verified: 2 players/);
    expect(output).toMatch(/every player connected: reporting initial-connect with 2\/2 players/);
    expect(output).toMatch(/result recorded: match COMPLETED/);
    expect(output).not.toContain(CREDENTIAL);
    for (const entry of roster.entries) expect(output).not.toContain(entry.joinToken);
  });

  it('keeps reporting register, initial-connect and the result through an outage longer than its HTTP retries, then exits 0', async () => {
    const port = await freePort();
    const roster = duel(port);
    const api = new ControlPlaneStandIn(roster);
    // Each report meets 4 s of 503s, as while PostgreSQL restarts: more than the SDK's own
    // retries (3, backoff up to 2 s) cover, well within REPORT_WAIT_MS.
    for (const route of ['register', 'initialConnect', 'result'] as const) api.outage(route, 4_000);
    const { app } = await launch(roster, port, {}, api);
    await registered(api, app);
    const players = await Promise.all(roster.entries.map((entry) => join(port, entry.joinToken)));
    await Promise.all(players.map(joined));

    expect(await exitWithin(app, 30_000)).toBe(0);
    for (const player of players)
      expect(player.messages.at(-1)).toMatchObject({ type: 'ended', outcome: 'COMPLETED' });
    for (const route of ['register', 'initialConnect', 'result'] as const)
      expect(api.callsTo(route).length).toBeGreaterThan(1);
    expect(app.output()).toMatch(/result recorded: match COMPLETED/);
  }, 60_000);

  it('refuses a forged token (4401), a stranger (4403) and a second connection (4409)', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, { CONNECT_DEADLINE_MS: '3000' });
    await registered(api, app);
    const [first, second] = roster.entries;

    const [claims = ''] = first!.joinToken.split('.');
    const forged = await join(port, `${claims}.${Buffer.alloc(32, 1).toString('base64url')}`);
    expect(await forged.closed).toEqual({
      code: 4401,
      reason: 'invalid join token: BAD_SIGNATURE',
    });

    const stranger = await join(
      port,
      signer.sign({
        matchId: roster.matchId,
        playerId: randomUUID(),
        serverId: SERVER_ID,
        endpoint: `127.0.0.1:${port}`,
        issuedAt: Date.now(),
        expiresAt: Date.now() + 60_000,
      }),
    );
    expect((await stranger.closed).code).toBe(4403);

    const player = await join(port, first!.joinToken);
    await joined(player);
    const duplicate = await join(port, first!.joinToken);
    expect((await duplicate.closed).code).toBe(4409);
    expect(player.socket.readyState).toBe(WebSocket.OPEN);

    const notJson = connect(port);
    await once(notJson, 'open');
    notJson.send('hello');
    const [badCode] = (await once(notJson, 'close')) as [number];
    expect(badCode).toBe(4400);

    const other = await join(port, second!.joinToken);
    await joined(other);
    expect(await exitWithin(app, 10_000)).toBe(0);
    expect(api.callsTo('initialConnect').map((c) => c.body)).toEqual([
      { connectedPlayerIds: [first!.playerId, second!.playerId].sort() },
    ]);
    expect(app.output()).toMatch(/join refused \(4401\): invalid join token \(BAD_SIGNATURE\)/);
  });

  it('exits non-zero without registering when the roster is truncated', async () => {
    const port = await freePort();
    const roster = duel(port);
    const truncated = { ...roster, entries: roster.entries.slice(1) };
    const { app, api } = await launch(truncated, port);

    expect(await exitWithin(app, 20_000)).toBe(2);
    expect(api.callsTo('roster')).toHaveLength(1);
    expect(api.callsTo('register')).toHaveLength(0);
    expect(api.calls).toHaveLength(1);
    expect(app.output()).toMatch(/roster rejected \(ROSTER_COUNT_MISMATCH\).*not registering/);
  });

  it('stops playing, tells its players and exits 0 without a result when the control plane ended the match (heartbeat refused)', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, {
      MATCH_DURATION_MS: '60000',
      SERVER_HEARTBEAT_INTERVAL_MS: '100',
    });
    await registered(api, app);
    const players = await Promise.all(roster.entries.map((entry) => join(port, entry.joinToken)));
    await Promise.all(players.map(joined));
    await waitFor(
      () => Promise.resolve(api.callsTo('initialConnect').length > 0 ? true : undefined),
      {
        what: 'initial-connect',
      },
    );

    api.endMatch();
    expect(await exitWithin(app, 10_000)).toBe(0);
    for (const player of players) {
      expect(player.messages.at(-1)).toEqual({ type: 'ended', outcome: 'FAILED' });
      expect((await player.closed).code).toBe(1000);
    }
    expect(api.callsTo('result')).toHaveLength(0);
    expect(app.output()).toMatch(
      /heartbeat refused \(ALLOCATION_ENDED\): the control plane ended the match/,
    );
  });

  it('reports only the connected player at the connect deadline when the other never shows', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, {
      CONNECT_DEADLINE_MS: '1000',
      MATCH_DURATION_MS: '2000',
    });
    await registered(api, app);
    const present = roster.entries.find((entry) => entry.team === 1);
    const absent = roster.entries.find((entry) => entry.team === 0);

    const player = await join(port, present!.joinToken);
    expect(await joined(player)).toEqual({ type: 'joined', playerId: present!.playerId, team: 1 });

    // Joining closes with initial-connect: the no-show is refused even with its valid token.
    await waitFor(
      () => Promise.resolve(api.callsTo('initialConnect').length > 0 ? true : undefined),
      {
        what: 'initial-connect',
      },
    );
    const late = await join(port, absent!.joinToken);
    expect((await late.closed).code).toBe(4410);

    expect(await exitWithin(app, 10_000)).toBe(0);

    expect(api.callsTo('initialConnect').map((c) => c.body)).toEqual([
      { connectedPlayerIds: [present!.playerId] },
    ]);
    // The only team with a player present wins.
    expect(api.callsTo('result').map((c) => c.body)).toEqual([
      expect.objectContaining({ outcome: 'COMPLETED', winningTeam: 1 }),
    ]);
    expect(app.output()).toMatch(/connect deadline \(1000 ms\) passed/);

    // The short team's backfill was requested; nobody came, so it was withdrawn as the match ended.
    const backfills = api.backfillCalls();
    expect(backfills[0]).toEqual({
      call: 'POST /',
      body: { team: 0, slots: 1, timeoutSeconds: 30 },
    });
    expect(backfills.at(-1)?.call).toMatch(/^DELETE \/[0-9a-f-]{36}$/);
    expect(backfills.slice(1, -1).every((b) => b.call.startsWith('GET '))).toBe(true);
    expect(app.output()).toMatch(/the match ended while OPEN[\s\S]*CANCELLED \(SERVER_CANCELLED\)/);
  });

  describe('backfill of a no-show', () => {
    /** A duel whose team 0 player never shows, and the revision 2 that replaces them. */
    function shortDuel(port: number): {
      roster: RosterResponse;
      present: RosterResponse['entries'][number];
      revision2: RosterResponse;
      added: RosterResponse['entries'][number];
    } {
      const roster = duel(port);
      const present = roster.entries.find((entry) => entry.team === 1)!;
      const absent = roster.entries.find((entry) => entry.team === 0)!;
      const revision2 = newRosterRevision({
        signer,
        base: roster,
        drop: [absent.playerId],
        add: [{ team: 0 }],
      });
      const added = revision2.entries.find((entry) => entry.team === 0)!;
      return { roster, present, revision2, added };
    }

    /** Waits until the game server made a backfill call matching `pattern`. */
    function backfillCall(
      api: ControlPlaneStandIn,
      app: RunningApp,
      pattern: RegExp,
    ): Promise<true> {
      return waitFor(
        () => Promise.resolve(api.backfillCalls().some((b) => pattern.test(b.call)) || undefined),
        { timeoutMs: 10_000, what: `a backfill call ${String(pattern)}; output:\n${app.output()}` },
      );
    }

    async function playShortHanded(
      published: RosterResponse,
      present: RosterResponse['entries'][number],
      port: number,
      revision: RosterResponse,
    ): Promise<{ app: RunningApp; api: ControlPlaneStandIn; player: Player }> {
      const api = new ControlPlaneStandIn(published);
      api.planBackfill(revision);
      const { app } = await launch(
        published,
        port,
        { CONNECT_DEADLINE_MS: '1500', MATCH_DURATION_MS: '4000', BACKFILL_POLL_MS: '100' },
        api,
      );
      await registered(api, app);
      const player = await join(port, present.joinToken);
      await joined(player);
      return { app, api, player };
    }

    it('requests the missing slot, verifies and accepts revision 2, admits the added player and reports them connected', async () => {
      const port = await freePort();
      const { roster, present, revision2, added } = shortDuel(port);
      const { app, api, player } = await playShortHanded(roster, present, port, revision2);

      await backfillCall(api, app, /\/accept$/);
      const late = await GameConnection.join({
        endpoint: `127.0.0.1:${port}`,
        joinToken: added.joinToken,
      });
      expect({ playerId: late.playerId, team: late.team }).toEqual({
        playerId: added.playerId,
        team: 0,
      });

      expect(await exitWithin(app, 15_000)).toBe(0);
      expect(await late.ended).toMatchObject({ outcome: 'COMPLETED' });
      expect(late.messages[0]).toMatchObject({ type: 'started' });
      expect(late.ticks().length).toBeGreaterThan(0);
      expect(player.messages.at(-1)).toMatchObject({ type: 'ended', outcome: 'COMPLETED' });

      const backfills = api.backfillCalls();
      const requestPath = /^GET (\/[0-9a-f-]{36})$/.exec(backfills[1]?.call ?? '')?.[1];
      expect(backfills[0]).toEqual({
        call: 'POST /',
        body: { team: 0, slots: 1, timeoutSeconds: 30 },
      });
      expect(backfills.slice(-2)).toEqual([
        { call: `POST ${requestPath}/accept`, body: { rosterRevision: 2 } },
        { call: `POST ${requestPath}/connect`, body: { connectedPlayerIds: [added.playerId] } },
      ]);
      expect(api.callsTo('roster')).toHaveLength(2);

      // The added player scored for team 0.
      const [result] = api.callsTo('result').map((c) => c.body as MatchResultRequest);
      expect(result?.scores?.[added.playerId]).toBeGreaterThan(0);
      expect(Object.keys(result?.scores ?? {})).toContain(present.playerId);

      const output = app.output();
      expect(output).toMatch(/team 0 short 1: requesting backfill/);
      expect(output).toMatch(/backfill [0-9a-f-]{36}: PUBLISHED.*roster revision 2/);
      expect(output).toMatch(/roster revision 2 verified/);
      expect(output).toMatch(/accepted roster revision 2: ASSIGNED/);
      expect(output).toMatch(/joined on team 0 \(backfill\)/);
      expect(output).toMatch(/FILLED: no-shows \[\]/);
      expect(output).not.toContain(added.joinToken);
    }, 40_000);

    it('refuses a tampered revision 2, cancels the request and keeps the added player out', async () => {
      const port = await freePort();
      const { roster, present, revision2, added } = shortDuel(port);
      const [claims = ''] = added.joinToken.split('.');
      const forged = `${claims}.${Buffer.alloc(32, 9).toString('base64url')}`;
      const tampered = {
        ...revision2,
        entries: revision2.entries.map((e) =>
          e.playerId === added.playerId ? { ...e, joinToken: forged } : e,
        ),
      };
      const { app, api } = await playShortHanded(roster, present, port, tampered);

      await backfillCall(api, app, /^DELETE /);
      const refused = await GameConnection.join({
        endpoint: `127.0.0.1:${port}`,
        joinToken: added.joinToken,
      }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(GameJoinRefusedError);
      expect(refused).toMatchObject({ code: 4410 });

      expect(await exitWithin(app, 15_000)).toBe(0);
      const calls = api.backfillCalls().map((b) => b.call);
      expect(calls.some((c) => c.endsWith('/accept') || c.endsWith('/connect'))).toBe(false);
      expect(calls.filter((c) => c.startsWith('DELETE'))).toHaveLength(1);
      expect(api.callsTo('result').map((c) => c.body)).toEqual([
        expect.objectContaining({ outcome: 'COMPLETED', winningTeam: 1 }),
      ]);
      expect(app.output()).toMatch(
        /roster revision 2 refused \(ROSTER_DIGEST_MISMATCH\).*cancelling the request/,
      );
    }, 40_000);
  });

  it('on SIGTERM mid-match reports the match FAILED, tells players it is going away, and stops cleanly', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, { MATCH_DURATION_MS: '60000' });
    await registered(api, app);
    const players = await Promise.all(roster.entries.map((entry) => join(port, entry.joinToken)));
    await waitFor(
      () =>
        Promise.resolve(
          players.every((p) => p.messages.some((m) => m.type === 'tick')) || undefined,
        ),
      { what: 'the match to start' },
    );

    expect(await app.stop('SIGTERM')).toBe('SIGTERM');
    expect((await Promise.all(players.map((p) => p.closed))).map((c) => c.code)).toEqual([
      1001, 1001,
    ]);
    expect(api.callsTo('result').map((c) => c.body)).toEqual([{ outcome: 'FAILED' }]);
    expect(app.output()).toMatch(/shutting down on SIGTERM[\s\S]*stopped cleanly/);
  });

  it('exits without playing when initial-connect answers that the match failed (nobody came)', async () => {
    const port = await freePort();
    const roster = duel(port);
    const { app, api } = await launch(roster, port, { CONNECT_DEADLINE_MS: '500' });

    expect(await exitWithin(app, 20_000)).toBe(0);
    expect(api.callsTo('initialConnect').map((c) => c.body)).toEqual([{ connectedPlayerIds: [] }]);
    expect(api.callsTo('result')).toHaveLength(0);
    expect(app.output()).toMatch(/match FAILED at initial-connect; exiting without playing/);
  });
});
