import { randomUUID } from 'node:crypto';
import { ServerRoutes, SERVER_PROTOCOL_VERSION } from '@matchplane/contracts';
import { DEFAULT_SKILL, displayRating } from '@matchplane/domain';
import { PlayerRatings } from '@matchplane/players';
import { CandidateProjection } from '@matchplane/tickets';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi, type TicketResponse } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  matchState,
  queuePlayers,
  REGION,
  serverCall,
  startDispatcherFor,
  startStaticAllocator,
  waitForHandOff,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

/*
 * Ratings through production code: players queue through the player routes, a match is committed
 * as the matcher commits it, allocated by the real allocator, and driven by the game-server
 * routes (register, initial-connect, result). The real dispatcher delivers the rating events.
 */

const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };
const OPERATOR_TOKEN = 'ops-token-0123456789abcdefghijklmnopqrstu';

interface SkillRow {
  id: string;
  rating_mu: number;
  rating_sigma: number;
  rating: number;
  rating_revision: string;
}

describe(PlayerRatings.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi({
      QUEUE_MODES: 'pair:2x2',
      OPERATOR_TOKENS: `ops=${OPERATOR_TOKEN}`,
    });
    dispatcher = await startDispatcherFor(api);
    allocator = await startStaticAllocator(api, keys, handOff, { servers: 6, firstPort: 7300 });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  /** Four players in a 2v2 (team = index % 2), IN_PROGRESS with `connected` of them connected. */
  async function playing(connectedOf: (players: QueuedPlayer[]) => QueuedPlayer[] = (p) => p) {
    const players = await queuePlayers(api, 4, 'pair');
    const matchId = await commitMatch(api, players, 'pair');
    const server = await waitForHandOff(handOff, matchId);
    const call = (route: string, body: unknown) =>
      serverCall(api, 'POST', route, server.credential, body);
    expect((await call(ServerRoutes.register(server.serverId), REGISTER)).statusCode).toBe(200);
    const connected = await call(ServerRoutes.initialConnect(server.serverId), {
      connectedPlayerIds: connectedOf(players).map((p) => p.playerId),
    });
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    const result = (body: unknown) => call(ServerRoutes.result(server.serverId), body);
    return { players, matchId, result };
  }

  async function skills(players: readonly QueuedPlayer[]): Promise<Map<string, SkillRow>> {
    const rows = await api.ds.query<SkillRow[]>(
      `SELECT id, rating_mu, rating_sigma, rating, rating_revision FROM players WHERE id = ANY($1::uuid[])`,
      [players.map((p) => p.playerId)],
    );
    return new Map(rows.map((row) => [row.id, row]));
  }

  async function ratingEvents(playerIds: readonly string[]) {
    return api.ds.query<
      {
        aggregate_id: string;
        aggregate_type: string;
        revision: string;
        player_ids: string[];
        payload: Record<string, unknown>;
        status: string;
        created_at: Date;
      }[]
    >(
      `SELECT aggregate_id, aggregate_type, revision, player_ids, payload, status, created_at
         FROM outbox WHERE event = 'rating.updated' AND aggregate_id = ANY($1::uuid[])
        ORDER BY aggregate_id, revision`,
      [playerIds],
    );
  }

  const operator = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    api.request(method, url, { token: OPERATOR_TOKEN, ...(body === undefined ? {} : { body }) });

  it('moves the winners up and the losers down with the COMPLETED, one rating.updated each, delivered', async () => {
    const { players, matchId, result } = await playing();
    const before = await skills(players);
    for (const row of before.values()) {
      expect(row).toMatchObject({ rating_mu: 25, rating: 1500, rating_revision: '0' });
      expect(row.rating_sigma).toBeCloseTo(DEFAULT_SKILL.sigma, 12);
    }

    const answered = await result({ outcome: 'COMPLETED', winningTeam: 1 });
    expect(answered.json()).toMatchObject({ matchId, state: 'COMPLETED' });

    const after = await skills(players);
    players.forEach((player, index) => {
      const row = after.get(player.playerId)!;
      const won = index % 2 === 1;
      if (won) expect(row.rating_mu).toBeGreaterThan(25);
      else expect(row.rating_mu).toBeLessThan(25);
      expect(row.rating_sigma).toBeLessThan(DEFAULT_SKILL.sigma);
      expect(row.rating).toBeCloseTo(displayRating({ mu: row.rating_mu, sigma: row.rating_sigma }));
      expect(won ? row.rating > 1500 : row.rating < 1500).toBe(true);
      expect(row.rating_revision).toBe('1');
    });

    const events = await ratingEvents(players.map((p) => p.playerId));
    expect(events).toHaveLength(4);
    const [completed] = await api.ds.query<{ created_at: Date }[]>(
      `SELECT created_at FROM outbox WHERE aggregate_id = $1 AND payload->>'to' = 'COMPLETED'`,
      [matchId],
    );
    for (const event of events) {
      const row = after.get(event.aggregate_id)!;
      expect(event).toMatchObject({
        aggregate_type: 'player',
        revision: '1',
        player_ids: [event.aggregate_id],
        payload: {
          playerId: event.aggregate_id,
          reason: 'MATCH_RESULT',
          matchId,
          mu: row.rating_mu,
          sigma: row.rating_sigma,
          rating: row.rating,
          previousMu: 25,
          previousRating: 1500,
        },
      });
      // now() is the transaction's start: the same instant proves one transaction with COMPLETED.
      expect(event.created_at).toEqual(completed!.created_at);
    }
    // A repeated report (the server retrying after a lost answer) replays the recorded answer
    // once the allocation is released, and rates nobody again.
    const replayed = await result({ outcome: 'COMPLETED', winningTeam: 1 });
    expect([replayed.statusCode, replayed.json()]).toEqual([
      200,
      expect.objectContaining({ state: 'COMPLETED' }),
    ]);
    expect(await skills(players)).toEqual(after);
    await waitFor(
      async () =>
        (await ratingEvents(players.map((p) => p.playerId))).every((e) => e.status === 'published')
          ? true
          : undefined,
      { what: 'the rating events to be delivered' },
    );
  });

  it('changes no rating for a FAILED result', async () => {
    const { players, matchId, result } = await playing();
    const before = await skills(players);
    expect((await result({ outcome: 'FAILED' })).json()).toMatchObject({ state: 'FAILED' });
    expect((await matchState(api.ds, matchId)).state).toBe('FAILED');
    expect(await skills(players)).toEqual(before);
    expect(await ratingEvents(players.map((p) => p.playerId))).toEqual([]);
  });

  it('leaves a no-show unrated and rates the players who connected', async () => {
    const { players, result } = await playing(([, ...present]) => present);
    const [absent] = players;
    const before = await skills(players);
    expect((await result({ outcome: 'COMPLETED', winningTeam: 0 })).json()).toMatchObject({
      state: 'COMPLETED',
    });
    const after = await skills(players);
    expect(after.get(absent!.playerId)).toEqual(before.get(absent!.playerId));
    // Team 0 (indexes 0 and 2) won with player 2 alone; team 1 (1 and 3) lost.
    expect(after.get(players[2]!.playerId)!.rating_mu).toBeGreaterThan(25);
    expect(after.get(players[1]!.playerId)!.rating_mu).toBeLessThan(25);
    expect(after.get(players[3]!.playerId)!.rating_mu).toBeLessThan(25);
    const events = await ratingEvents(players.map((p) => p.playerId));
    expect(events.map((e) => e.aggregate_id).sort()).toEqual(
      players
        .slice(1)
        .map((p) => p.playerId)
        .sort(),
    );
  });

  it('reads a rating and imports ratings through the operator routes, audited, all or nothing', async () => {
    const [a, b] = await queuePlayers(api, 2, 'pair');
    const read = await operator('GET', `/v1/admin/players/${a!.playerId}/rating`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      playerId: a!.playerId,
      mu: 25,
      rating: 1500,
      revision: 0,
      updatedAt: null,
    });

    const imported = await operator('POST', '/api/v1/admin/ratings/import', {
      ratings: [
        { playerId: a!.playerId, mu: 31, sigma: 2 },
        { playerId: b!.playerId, mu: 18.5, sigma: 3.5 },
      ],
      reason: 'season 2 carry-over',
    });
    expect(imported.statusCode).toBe(200);
    expect(imported.json()).toMatchObject({ imported: 2 });
    const shown = await operator('GET', `/api/v1/admin/players/${a!.playerId}/rating`);
    expect(shown.json()).toMatchObject({
      mu: 31,
      sigma: 2,
      rating: displayRating({ mu: 31, sigma: 2 }),
      revision: 1,
      updatedAt: expect.any(String),
    });
    const events = await ratingEvents([a!.playerId, b!.playerId]);
    expect(events.map((e) => e.payload)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ playerId: a!.playerId, reason: 'OPERATOR_IMPORT', mu: 31 }),
        expect.objectContaining({ playerId: b!.playerId, reason: 'OPERATOR_IMPORT', mu: 18.5 }),
      ]),
    );
    const audit = await api.ds.query<
      { actor: string; action: string; target_id: string; reason: string }[]
    >(
      `SELECT actor, action, target_id, reason FROM audit_log WHERE action = 'players.rating.imported' ORDER BY id`,
    );
    expect(audit).toEqual([
      {
        actor: 'ops',
        action: 'players.rating.imported',
        target_id: a!.playerId,
        reason: 'season 2 carry-over',
      },
      {
        actor: 'ops',
        action: 'players.rating.imported',
        target_id: b!.playerId,
        reason: 'season 2 carry-over',
      },
    ]);

    // A bad entry refuses the whole import, naming the entry; nothing changes.
    const refusals: [unknown, string][] = [
      [
        {
          ratings: [
            { playerId: a!.playerId, mu: 30, sigma: 1 },
            { playerId: randomUUID(), mu: 1, sigma: 1 },
          ],
        },
        'ratings.1.playerId',
      ],
      [
        {
          ratings: [
            { playerId: a!.playerId, mu: 30, sigma: 1 },
            { playerId: b!.playerId, mu: 1, sigma: 0 },
          ],
        },
        'ratings.1.sigma',
      ],
      [
        {
          ratings: [
            { playerId: a!.playerId, mu: 30, sigma: 1 },
            { playerId: b!.playerId, mu: 'x', sigma: 1 },
          ],
        },
        'ratings.1.mu',
      ],
      [
        {
          ratings: [
            { playerId: a!.playerId, mu: 30, sigma: 1 },
            { playerId: a!.playerId, mu: 1, sigma: 1 },
          ],
        },
        'ratings.1.playerId',
      ],
      [
        {
          ratings: [
            { playerId: a!.playerId, mu: 30, sigma: 1 },
            { playerId: b!.playerId, mu: 1e308, sigma: 1 },
          ],
        },
        'ratings.1.mu',
      ],
      [{ ratings: [] }, 'ratings'],
      [
        {
          ratings: Array.from({ length: 501 }, () => ({ playerId: a!.playerId, mu: 1, sigma: 1 })),
        },
        'ratings',
      ],
    ];
    for (const [body, field] of refusals) {
      const refused = await operator('POST', '/v1/admin/ratings/import', body);
      expect([field, refused.statusCode]).toEqual([field, 400]);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(
        (refused.json<{ errors: { field: string }[] }>().errors ?? []).map((e) => e.field),
      ).toContain(field);
    }
    expect((await operator('GET', `/v1/admin/players/${a!.playerId}/rating`)).json()).toMatchObject(
      { mu: 31, revision: 1 },
    );

    const missing = await operator('GET', `/v1/admin/players/${randomUUID()}/rating`);
    expect(missing.json()).toMatchObject({ status: 404, code: 'PLAYER_NOT_FOUND' });
    const malformed = await operator('GET', '/v1/admin/players/not-a-uuid/rating');
    expect(malformed.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('accepts player ids in capitals wherever it accepts them in lowercase', async () => {
    const session = await api.newPlayer();
    const upper = session.playerId.toUpperCase();
    const imported = await operator('POST', '/v1/admin/ratings/import', {
      ratings: [{ playerId: upper, mu: 29, sigma: 3 }],
    });
    expect([imported.statusCode, imported.json()]).toEqual([
      200,
      expect.objectContaining({ imported: 1 }),
    ]);
    const shown = await operator('GET', `/v1/admin/players/${upper}/rating`);
    expect(shown.json()).toMatchObject({ playerId: session.playerId, mu: 29, sigma: 3 });
  });

  it("queues a player with its rating and uncertainty, as the matcher's candidate reads them", async () => {
    const session = await api.newPlayer();
    expect((await api.probe(session.token, REGION)).statusCode).toBeLessThan(300);
    const skill = { mu: 30, sigma: 2.5 };
    const imported = await operator('POST', '/v1/admin/ratings/import', {
      ratings: [{ playerId: session.playerId, ...skill }],
    });
    expect(imported.statusCode).toBe(200);
    const created = await api.enqueue(session.token, 'pair');
    expect(created.statusCode).toBe(201);
    const candidate = await api.app
      .get(CandidateProjection, { strict: false })
      .candidate(created.json<TicketResponse>().id);
    expect(candidate).toMatchObject({ rating: displayRating(skill), ratingSigma: 2.5 });
  });

  it('refuses the operator routes without an operator token (401) or with a wrong one (403)', async () => {
    const [a] = await queuePlayers(api, 1, 'pair');
    const routes = [
      ['GET', `/v1/admin/players/${a!.playerId}/rating`, undefined],
      [
        'POST',
        '/v1/admin/ratings/import',
        { ratings: [{ playerId: a!.playerId, mu: 40, sigma: 1 }] },
      ],
    ] as const;
    for (const [method, url, body] of routes) {
      const none = await api.request(method, url, body === undefined ? {} : { body });
      expect([url, none.statusCode, none.json().code]).toEqual([url, 401, 'UNAUTHENTICATED']);
      const player = await api.request(method, url, {
        token: a!.token,
        ...(body === undefined ? {} : { body }),
      });
      expect([url, player.statusCode]).toEqual([url, 403]);
    }
    expect((await skills([a!])).get(a!.playerId)).toMatchObject({
      rating_mu: 25,
      rating_revision: '0',
    });
  });
});
