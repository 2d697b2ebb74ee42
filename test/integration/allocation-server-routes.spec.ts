import { ServerRoutes, SERVER_PROTOCOL_VERSION, type ServerHandOff } from '@matchplane/contracts';
import { PlayerStore } from '@matchplane/players';
import { runInTransaction } from '@matchplane/persistence';
import { ServersController } from '../../apps/api/src/servers/servers.controller';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startStaticAllocator,
  ticketStates,
  waitForHandOff,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };

describe(ServersController.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi({
      QUEUE_MODES: 'duel:1x2,pair:2x2',
      NO_SHOW_COOLDOWN_BASE_SECONDS: '60',
    });
    dispatcher = await startDispatcherFor(api);
    allocator = await startStaticAllocator(api, keys, handOff, { servers: 8, firstPort: 7100 });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  async function allocated(
    mode: 'duel' | 'pair',
    size: number,
  ): Promise<{ players: QueuedPlayer[]; matchId: string; server: ServerHandOff }> {
    const players = await queuePlayers(api, size, mode);
    const matchId = await commitMatch(api, players, mode);
    return { players, matchId, server: await waitForHandOff(handOff, matchId) };
  }

  async function inProgress(mode: 'duel' | 'pair', size: number) {
    const match = await allocated(mode, size);
    const registered = await serverCall(
      api,
      'POST',
      ServerRoutes.register(match.server.serverId),
      match.server.credential,
      REGISTER,
    );
    expect(registered.statusCode).toBe(200);
    return match;
  }

  it('answers 401 without a valid workload credential and 403 for another server id, under both prefixes', async () => {
    const a = await allocated('duel', 2);
    const b = await allocated('duel', 2);
    const routes = [
      ['GET', ServerRoutes.roster(a.server.serverId)],
      ['POST', ServerRoutes.register(a.server.serverId)],
      ['POST', ServerRoutes.initialConnect(a.server.serverId)],
      ['POST', ServerRoutes.result(a.server.serverId)],
    ] as const;
    for (const prefix of ['v1', 'api/v1']) {
      for (const [method, route] of routes) {
        const url = `/${prefix}/${route}`;
        const none = await api.request(method, url, { body: method === 'POST' ? {} : undefined });
        expect([url, none.statusCode, none.json().code]).toEqual([url, 401, 'UNAUTHENTICATED']);
        expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
        const wrong = await api.request(method, url, {
          token: 'not-a-credential',
          body: method === 'POST' ? {} : undefined,
        });
        expect([url, wrong.statusCode]).toEqual([url, 401]);
        // b's credential is bound to b's server.
        const other = await api.request(method, url, {
          token: b.server.credential,
          body: method === 'POST' ? {} : undefined,
        });
        expect([url, other.statusCode, other.json().code]).toEqual([url, 403, 'FORBIDDEN']);
      }
    }
    const own = await api.request('GET', `/api/v1/${ServerRoutes.roster(a.server.serverId)}`, {
      token: a.server.credential,
    });
    expect(own.statusCode).toBe(200);
  });

  it('registers only while every participant holds a live assignment, in one step, and idempotently', async () => {
    const { players, matchId, server } = await allocated('duel', 2);
    const register = (body: unknown = REGISTER) =>
      serverCall(api, 'POST', ServerRoutes.register(server.serverId), server.credential, body);

    expect((await register({ protocolVersion: 99, imageDigest: 'x' })).json()).toMatchObject({
      status: 400,
      code: 'SERVER_PROTOCOL_UNSUPPORTED',
    });
    expect((await register({ protocolVersion: 1 })).json()).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
    });

    // One assignment past its expiry (as if the server came up too late).
    await api.ds.query(
      `UPDATE assignments SET expires_at = now() - interval '1 second' WHERE match_id = $1 AND player_id = $2`,
      [matchId, players[0]!.playerId],
    );
    const gated = await register();
    expect(gated.statusCode).toBe(409);
    expect(gated.json()).toMatchObject({ code: 'ASSIGNMENTS_NOT_READY' });
    expect(gated.headers['retry-after']).toBe('1');
    expect(await matchState(api.ds, matchId)).toMatchObject({ state: 'ALLOCATING', revision: 1 });
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['MATCHED', 'MATCHED']);
    await api.ds.query(
      `UPDATE assignments SET expires_at = now() + interval '10 minutes' WHERE match_id = $1`,
      [matchId],
    );

    const first = await register();
    expect(first.json()).toEqual({
      matchId,
      serverId: server.serverId,
      state: 'ASSIGNMENT_READY',
      revision: 3,
    });
    const again = await register();
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const revisions = await api.ds.query<{ revision: string; to: string }[]>(
      `SELECT revision, payload->>'to' AS to FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
      [matchId],
    );
    expect(revisions.map((r) => [Number(r.revision), r.to])).toEqual([
      [1, 'ALLOCATING'],
      [2, 'PROCESS_READY'],
      [3, 'ASSIGNMENT_READY'],
    ]);
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['ASSIGNED', 'ASSIGNED']);
  });

  it('goes on without a no-show while every team keeps a player, penalising the no-show (429 on its next enqueue)', async () => {
    const early = await allocated('pair', 4);
    const tooEarly = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(early.server.serverId),
      early.server.credential,
      {
        connectedPlayerIds: [],
      },
    );
    expect(tooEarly.json()).toMatchObject({ status: 409, code: 'MATCH_STATE_CONFLICT' });

    const { players, matchId, server } = await inProgress('pair', 4);
    const [absent, ...present] = players;
    const connect = (ids: string[]) =>
      serverCall(api, 'POST', ServerRoutes.initialConnect(server.serverId), server.credential, {
        connectedPlayerIds: ids,
      });

    expect((await connect(['00000000-0000-4000-8000-000000000000'])).json()).toMatchObject({
      status: 400,
      code: 'UNKNOWN_PARTICIPANT',
    });
    expect((await connect(['nope'])).json()).toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
    });

    const response = await connect(present.map((p) => p.playerId));
    expect(response.json()).toEqual({
      matchId,
      state: 'IN_PROGRESS',
      revision: 4,
      noShowPlayerIds: [absent!.playerId],
    });
    const states = await ticketStates(api.ds, matchId);
    expect(states[absent!.playerId]).toBe('FAILED');
    for (const player of present) expect(states[player.playerId]).toBe('CONNECTED');
    const [penalised] = await api.ds.query<{ no_show_count: number; cooldown_until: Date }[]>(
      `SELECT no_show_count, cooldown_until FROM players WHERE id = $1`,
      [absent!.playerId],
    );
    expect(penalised!.no_show_count).toBe(1);
    expect(penalised!.cooldown_until.getTime() - Date.now()).toBeGreaterThan(50_000);

    const refused = await api.enqueue(absent!.token, 'pair');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'COOLDOWN_ACTIVE' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50);

    // The roster records the report: when each player connected, and who never showed.
    const roster = async () =>
      new Map(
        (
          await api.ds.query<{ player_id: string; connected_at: Date | null; no_show: boolean }[]>(
            `SELECT player_id, connected_at, no_show FROM match_participants WHERE match_id = $1`,
            [matchId],
          )
        ).map((row) => [row.player_id, row]),
      );
    const recorded = await roster();
    expect(recorded.get(absent!.playerId)).toMatchObject({ connected_at: null, no_show: true });
    for (const player of present) {
      expect(recorded.get(player.playerId)).toMatchObject({ no_show: false });
      expect(recorded.get(player.playerId)?.connected_at).toBeInstanceOf(Date);
    }

    // A repeated report answers the current state and changes nothing.
    expect((await connect(present.map((p) => p.playerId))).json()).toMatchObject({
      state: 'IN_PROGRESS',
      revision: 4,
    });
    expect(await roster()).toEqual(recorded);

    const failed = await serverCall(
      api,
      'POST',
      ServerRoutes.result(server.serverId),
      server.credential,
      { outcome: 'FAILED' },
    );
    expect(failed.json()).toEqual({ matchId, state: 'FAILED', revision: 5 });
    expect((await matchState(api.ds, matchId)).failure_reason).toBe('SERVER_REPORTED_FAILURE');
  });

  it('fails the match with NO_SHOW when a team is left empty; the connected player may queue again at once', async () => {
    const { players, matchId, server } = await inProgress('duel', 2);
    const [absent, present] = players;
    const premature = await serverCall(
      api,
      'POST',
      ServerRoutes.result(server.serverId),
      server.credential,
      { outcome: 'COMPLETED' },
    );
    expect(premature.json()).toMatchObject({ status: 409, code: 'MATCH_STATE_CONFLICT' });

    const response = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(server.serverId),
      server.credential,
      {
        connectedPlayerIds: [present!.playerId],
      },
    );
    expect(response.json()).toEqual({
      matchId,
      state: 'FAILED',
      revision: 4,
      noShowPlayerIds: [absent!.playerId],
    });
    expect(await matchState(api.ds, matchId)).toMatchObject({
      state: 'FAILED',
      failure_reason: 'NO_SHOW',
    });
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['FAILED', 'FAILED']);
    const reasons = await api.ds.query<{ player: string; reason: string }[]>(
      `SELECT player_ids[1]::text AS player, payload->>'reason' AS reason FROM outbox
        WHERE aggregate_type = 'ticket' AND payload->>'matchId' = $1 AND payload->>'to' = 'FAILED'`,
      [matchId],
    );
    expect(Object.fromEntries(reasons.map((r) => [r.player, r.reason]))).toEqual({
      [absent!.playerId]: 'NO_SHOW',
      [present!.playerId]: 'MATCH_FAILED',
    });
    const [allocation] = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    expect(allocation!.state).toBe('RELEASED');

    // The ended match answers its players MATCH_ENDED with the reason, no longer "not ready",
    // and each ended ticket says why it ended.
    for (const player of [absent!, present!]) {
      const ended = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
        token: player.token,
      });
      expect(ended.statusCode).toBe(410);
      expect(ended.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(ended.json()).toMatchObject({
        status: 410,
        code: 'MATCH_ENDED',
        matchState: 'FAILED',
        endReason: 'NO_SHOW',
      });
    }
    const ticketOf = async (player: { token: string; ticket: { id: string } }) =>
      (
        await api.request('GET', `/v1/queue/tickets/${player.ticket.id}`, { token: player.token })
      ).json();
    expect(await ticketOf(absent!)).toMatchObject({ state: 'FAILED', endReason: 'NO_SHOW' });
    expect(await ticketOf(present!)).toMatchObject({ state: 'FAILED', endReason: 'MATCH_FAILED' });

    const again = await api.enqueue(present!.token, 'duel');
    expect(again.statusCode).toBe(201);
    expect(again.json()).not.toHaveProperty('endReason');
    expect((await api.enqueue(absent!.token, 'duel')).statusCode).toBe(429);
  });

  it('refuses the credential once the match ended and its allocation was released (401 ALLOCATION_ENDED)', async () => {
    const { players, matchId, server } = await inProgress('duel', 2);
    const call = (method: 'GET' | 'POST', route: string, body?: unknown) =>
      serverCall(api, method, route, server.credential, body);
    const connected = await call('POST', ServerRoutes.initialConnect(server.serverId), {
      connectedPlayerIds: players.map((p) => p.playerId),
    });
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    const ended = await call('POST', ServerRoutes.result(server.serverId), {
      outcome: 'COMPLETED',
      winningTeam: 0,
    });
    expect(ended.json()).toMatchObject({ matchId, state: 'COMPLETED' });
    const [allocation] = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    expect(allocation!.state).toBe('RELEASED');

    const routes = [
      ['GET', ServerRoutes.roster(server.serverId), undefined],
      ['POST', ServerRoutes.register(server.serverId), REGISTER],
      ['POST', ServerRoutes.initialConnect(server.serverId), { connectedPlayerIds: [] }],
    ] as const;
    for (const [method, route, body] of routes) {
      const refused = await call(method, route, body);
      expect([route, refused.statusCode, refused.json().code]).toEqual([
        route,
        401,
        'ALLOCATION_ENDED',
      ]);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await matchState(api.ds, matchId)).toMatchObject({ state: 'COMPLETED' });
  });

  it('answers a result report repeated after its match ended: the identical one 200 as recorded, a different one 409 naming the conflict', async () => {
    const { players, matchId, server } = await inProgress('duel', 2);
    const report = (body: unknown) =>
      serverCall(api, 'POST', ServerRoutes.result(server.serverId), server.credential, body);
    await serverCall(api, 'POST', ServerRoutes.initialConnect(server.serverId), server.credential, {
      connectedPlayerIds: players.map((p) => p.playerId),
    });
    const first = await report({ outcome: 'COMPLETED', winningTeam: 1 });
    expect(first.statusCode).toBe(200);
    // A server whose first answer was lost retries: the allocation is released by now.
    const repeat = await report({ outcome: 'COMPLETED', winningTeam: 1 });
    expect([repeat.statusCode, repeat.json()]).toEqual([200, first.json()]);
    for (const conflicting of [{ outcome: 'COMPLETED', winningTeam: 0 }, { outcome: 'FAILED' }]) {
      const refused = await report(conflicting);
      expect([refused.statusCode, refused.json().code]).toEqual([409, 'RESULT_CONFLICT']);
      expect(refused.json().detail).toContain('recorded COMPLETED');
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await matchState(api.ds, matchId)).toMatchObject({ state: 'COMPLETED' });
    const [allocation] = await api.ds.query<{ reported_result: { winningTeam: number } }[]>(
      `SELECT reported_result FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    expect(allocation!.reported_result.winningTeam).toBe(1);
  });

  it('answers a result report for a match the control plane ended first with 409 naming how it ended', async () => {
    const { players, server } = await inProgress('duel', 2);
    const failed = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(server.serverId),
      server.credential,
      { connectedPlayerIds: [players[0]!.playerId] },
    );
    expect(failed.json()).toMatchObject({ state: 'FAILED' });
    for (const body of [{ outcome: 'COMPLETED', winningTeam: 0 }, { outcome: 'FAILED' }]) {
      const refused = await serverCall(
        api,
        'POST',
        ServerRoutes.result(server.serverId),
        server.credential,
        body,
      );
      expect([refused.statusCode, refused.json().code]).toEqual([409, 'RESULT_CONFLICT']);
      expect(refused.json().detail).toContain('FAILED (NO_SHOW)');
    }
  });

  it('records one of nine conflicting result reports sent at once; each that conflicts with it is a 409', async () => {
    const { players, matchId, server } = await inProgress('duel', 2);
    const connected = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(server.serverId),
      server.credential,
      { connectedPlayerIds: players.map((p) => p.playerId) },
    );
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    const kinds = [
      { outcome: 'COMPLETED', winningTeam: 0 },
      { outcome: 'COMPLETED', winningTeam: 1 },
      { outcome: 'FAILED' },
    ];
    const reports = [...kinds, ...kinds, ...kinds];
    const answers = await Promise.all(
      reports.map((report) =>
        serverCall(api, 'POST', ServerRoutes.result(server.serverId), server.credential, report),
      ),
    );
    const [recorded] = await api.ds.query<{ reported_result: Record<string, unknown> }[]>(
      `SELECT reported_result FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    const winner = kinds.find(
      (kind) =>
        kind.outcome === recorded!.reported_result.outcome &&
        kind.winningTeam === recorded!.reported_result.winningTeam,
    );
    expect(winner).toBeDefined();
    const state = winner!.outcome;
    expect(await matchState(api.ds, matchId)).toMatchObject({ state });
    let conflicts = 0;
    reports.forEach((report, index) => {
      const answer = answers[index]!;
      // Whether it reached the route before or after the winner committed, the answer is the same.
      if (report === winner) {
        expect([answer.statusCode, answer.json()]).toEqual([
          200,
          { matchId, state, revision: expect.any(Number) },
        ]);
      } else {
        conflicts += 1;
        expect([answer.statusCode, answer.json().code]).toEqual([409, 'RESULT_CONFLICT']);
        expect(answer.json().detail).toContain(`recorded ${state}`);
      }
    });
    expect(conflicts).toBe(6);
  });

  it('answers a body nested thousands deep with 400 JSON_TOO_DEEP on every server route, credential and all', async () => {
    const { server } = await allocated('duel', 2);
    const deep = `{"connectedPlayerIds":${'['.repeat(3_000)}${']'.repeat(3_000)}}`;
    for (const route of [
      ServerRoutes.register(server.serverId),
      ServerRoutes.initialConnect(server.serverId),
      ServerRoutes.result(server.serverId),
    ]) {
      const response = await api.request('POST', `/v1/${route}`, {
        token: server.credential,
        rawBody: deep,
      });
      expect([route, response.statusCode, response.json().code]).toEqual([
        route,
        400,
        'JSON_TOO_DEEP',
      ]);
    }
  });

  it('doubles the no-show cooldown with each repeat, up to the cap', async () => {
    const session = await api.newPlayer();
    const players = api.app.get(PlayerStore, { strict: false });
    const now = new Date();
    const policy = { baseMs: 60_000, capMs: 200_000, decayMs: 86_400_000 };
    const cooldowns: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const penalty = await runInTransaction(api.ds, (manager, unit) =>
        players.penaliseNoShow(unit, session.playerId, now, policy),
      );
      cooldowns.push(penalty!.cooldownUntil.getTime() - now.getTime());
    }
    expect(cooldowns).toEqual([60_000, 120_000, 200_000, 200_000]);
  });
});
