import { ServerRoutes, SERVER_PROTOCOL_VERSION } from '@matchplane/contracts';
import type { MatchHistoryEntry, MatchHistoryResponse } from '@matchplane/contracts';
import { MatchHistoryReader } from '@matchplane/matches';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi, type TicketResponse } from '../support/player-api';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startStaticAllocator,
  waitForHandOff,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

/*
 * GET /v1/matches/history through production code: players queue through the player routes, the
 * match is committed as the matcher commits it, allocated by the real allocator and played to its
 * end through the game-server routes; the history is read back through the player route.
 */

const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };

describe(MatchHistoryReader.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES: 'pair:2x2' });
    dispatcher = await startDispatcherFor(api);
    allocator = await startStaticAllocator(api, keys, handOff, { servers: 4, firstPort: 7500 });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  /** Plays `players` through one match to `result`; answers its id. */
  async function play(players: QueuedPlayer[], result: Record<string, unknown>): Promise<string> {
    const matchId = await commitMatch(api, players, 'pair');
    const server = await waitForHandOff(handOff, matchId);
    const call = (route: string, body: unknown) =>
      serverCall(api, 'POST', route, server.credential, body);
    expect((await call(ServerRoutes.register(server.serverId), REGISTER)).statusCode).toBe(200);
    const connected = await call(ServerRoutes.initialConnect(server.serverId), {
      connectedPlayerIds: players.map((p) => p.playerId),
    });
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    expect((await call(ServerRoutes.result(server.serverId), result)).statusCode).toBe(200);
    return matchId;
  }

  async function requeue(players: QueuedPlayer[]): Promise<QueuedPlayer[]> {
    return Promise.all(
      players.map(async (player) => {
        const created = await api.enqueue(player.token, 'pair');
        expect(created.statusCode).toBe(201);
        return { ...player, ticket: created.json<TicketResponse>() };
      }),
    );
  }

  function history(token: string, query = '') {
    return api.request('GET', `/v1/matches/history${query}`, { token });
  }

  it("pages a player's finished matches, newest first, with teams, result, outcome and rating change", async () => {
    const players = await queuePlayers(api, 4, 'pair');
    const [me] = players;
    const won = await play(players, {
      outcome: 'COMPLETED',
      winningTeam: 1,
      scores: { [me!.playerId]: 7 },
    });
    const failed = await play(await requeue(players), { outcome: 'FAILED' });

    const first = await history(me!.token, '?limit=1');
    expect(first.statusCode).toBe(200);
    const page1 = first.json<MatchHistoryResponse>();
    expect(page1.matches.map((m) => m.matchId)).toEqual([failed]);
    expect(page1.matches[0]).toMatchObject({
      mode: 'pair',
      state: 'FAILED',
      endReason: 'SERVER_REPORTED_FAILURE',
      result: { outcome: 'FAILED' },
    });
    expect(page1.matches[0]).not.toHaveProperty('outcome');
    expect(page1.matches[0]).not.toHaveProperty('ratingChange');
    expect(page1.nextCursor).toEqual(expect.any(String));

    const second = await history(me!.token, `?limit=1&cursor=${page1.nextCursor}`);
    const page2 = second.json<MatchHistoryResponse>();
    expect(page2.matches.map((m) => m.matchId)).toEqual([won]);
    expect(page2).not.toHaveProperty('nextCursor');
    const entry = page2.matches[0] as MatchHistoryEntry;
    const teamOf = (playerId: string) =>
      entry.teams.find((t) => t.playerIds.includes(playerId))?.team;
    expect(entry.teams.flatMap((t) => t.playerIds).sort()).toEqual(
      players.map((p) => p.playerId).sort(),
    );
    expect(entry.team).toBe(teamOf(me!.playerId));
    expect(entry).toMatchObject({
      state: 'COMPLETED',
      region: expect.any(String),
      result: { outcome: 'COMPLETED', winningTeam: 1, scores: { [me!.playerId]: 7 } },
      outcome: entry.team === 1 ? 'WIN' : 'LOSS',
    });
    const [rated] = await api.ds.query<{ rating: number }[]>(
      `SELECT rating FROM players WHERE id = $1`,
      [me!.playerId],
    );
    expect(entry.ratingChange).toEqual({
      before: 1500,
      after: rated!.rating,
      delta: rated!.rating - 1500,
    });
    expect(Math.sign(entry.ratingChange!.delta)).toBe(entry.team === 1 ? 1 : -1);

    // The whole history in one page is the two pages together.
    const whole = (await history(me!.token)).json<MatchHistoryResponse>();
    expect(whole.matches.map((m) => m.matchId)).toEqual([failed, won]);
  });

  it("shows a player none of other players' matches, and refuses bad paging", async () => {
    const stranger = await api.newPlayer();
    expect((await history(stranger.token)).json()).toEqual({ matches: [] });
    const badCursor = await history(stranger.token, '?cursor=bm90LWEtY3Vyc29y');
    expect(badCursor.json()).toMatchObject({ status: 400, code: 'INVALID_CURSOR' });
    const badLimit = await history(stranger.token, '?limit=0');
    expect(badLimit.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const anonymous = await api.request('GET', '/v1/matches/history');
    expect(anonymous.statusCode).toBe(401);
  });
});
