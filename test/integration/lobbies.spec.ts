import type { LobbyResponse, ProblemDetails, SessionResponse } from '@matchplane/contracts';
import { TicketArrivals } from '@matchplane/tickets';
import { QueueControlsAdmin } from '../../apps/api/src/admin/live-ops/queue-controls.admin';
import { startPlayerApi, type InjectedResponse, type PlayerApi } from '../support/player-api';

/**
 * Lobbies through the real player routes on a real database: every row comes from a route. Each
 * refusal answers its status and problem code with a message, and writes nothing (the lobby,
 * member, ticket and match rows are counted before and after).
 */
const QUEUE_MODES = 'duel:1x2,pair:2x2,hunt:3+1';

interface RowCounts {
  lobbies: number;
  members: number;
  tickets: number;
  matches: number;
}

describe('lobbies', () => {
  let api: PlayerApi;

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES, LOBBY_TTL_SECONDS: '60' });
  });

  afterAll(async () => {
    await api?.close();
  });

  async function player(probe: string | null = 'eu-west'): Promise<SessionResponse> {
    const session = await api.newPlayer();
    if (probe) expect((await api.probe(session.token, probe)).statusCode).toBe(200);
    return session;
  }

  function call(session: SessionResponse, method: 'GET' | 'POST', url: string, body?: unknown) {
    return api.request(method, url, { token: session.token, ...(body ? { body } : {}) });
  }

  async function create(owner: SessionResponse, body: unknown = { mode: 'pair' }) {
    const response = await call(owner, 'POST', '/v1/lobbies', body);
    expect(response.statusCode).toBe(201);
    return response.json<LobbyResponse>();
  }

  async function lobbyOf(owner: SessionResponse, ...members: SessionResponse[]) {
    const created = await create(owner);
    for (const member of members) {
      const joined = await call(member, 'POST', '/v1/lobbies/join', {
        inviteCode: created.inviteCode,
      });
      expect(joined.statusCode).toBe(200);
    }
    return created;
  }

  async function counts(): Promise<RowCounts> {
    const [row] = await api.ds.query<RowCounts[]>(
      `SELECT (SELECT count(*)::int FROM lobbies) AS lobbies,
              (SELECT count(*)::int FROM lobby_members) AS members,
              (SELECT count(*)::int FROM queue_tickets) AS tickets,
              (SELECT count(*)::int FROM matches) AS matches`,
    );
    return row as RowCounts;
  }

  /** The refusal's status, code and message, and nothing written by it. */
  async function refused(
    attempt: () => Promise<InjectedResponse>,
    status: number,
    code: string,
  ): Promise<ProblemDetails> {
    const before = await counts();
    const response = await attempt();
    expect({ status: response.statusCode, body: response.body }).toMatchObject({ status });
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = response.json<ProblemDetails>();
    expect(problem.code).toBe(code);
    expect(problem.detail).toEqual(expect.any(String));
    expect(await counts()).toEqual(before);
    return problem;
  }

  it('creates a lobby with an invite code, lets players join, arrange teams and start it', async () => {
    const [owner, a, b, c] = await Promise.all([player(), player(), player('us-east'), player()]);
    const created = await lobbyOf(owner, a, b, c);
    expect(created.inviteCode).toMatch(/^mpl_[A-Za-z0-9_-]{22}$/);
    expect(created).toMatchObject({ mode: 'pair', size: 4, teamCount: 2, teamSize: 2 });
    expect(created).toMatchObject({ ranked: false, state: 'OPEN' });

    const teams = await call(owner, 'POST', '/v1/lobbies/current/teams', {
      teams: [
        [owner.playerId, b.playerId],
        [a.playerId, c.playerId],
      ],
    });
    expect(teams.statusCode).toBe(200);
    const started = await call(owner, 'POST', '/v1/lobbies/current/start');
    expect(started.statusCode).toBe(200);
    const lobby = started.json<LobbyResponse>();
    expect(lobby.state).toBe('STARTED');
    expect(lobby).not.toHaveProperty('inviteCode');

    // The match was created with its roster as arranged, unrated, in the members' best region.
    const [match] = await api.ds.query<{ state: string; region: string; rated: boolean }[]>(
      `SELECT state, region, rated FROM matches WHERE id = $1`,
      [lobby.matchId],
    );
    expect(match).toEqual({ state: 'ALLOCATING', region: 'eu-west', rated: false });
    const roster = await api.ds.query<{ player_id: string; ticket_id: string; team: number }[]>(
      `SELECT player_id, ticket_id, team FROM match_participants WHERE match_id = $1`,
      [lobby.matchId],
    );
    const teamOf = new Map(roster.map((row) => [row.player_id, row.team]));
    expect([owner, b, a, c].map((p) => teamOf.get(p.playerId))).toEqual([0, 0, 1, 1]);
    // Each member follows its own ticket, MATCHED to the match, as a queued player would.
    const sessions = new Map([owner, a, b, c].map((p) => [p.playerId, p]));
    for (const member of lobby.members) {
      const session = sessions.get(member.playerId) as SessionResponse;
      const own = await call(session, 'GET', `/v1/queue/tickets/${member.ticketId}`);
      expect(own.json()).toMatchObject({ state: 'MATCHED', matchId: lobby.matchId, mode: 'pair' });
    }
    // The match's first event went to every member.
    const [event] = await api.ds.query<{ player_ids: string[] }[]>(
      `SELECT player_ids FROM outbox WHERE aggregate_id = $1 AND revision = 1`,
      [lobby.matchId],
    );
    expect([...(event?.player_ids ?? [])].sort()).toEqual(
      [owner, a, b, c].map((p) => p.playerId).sort(),
    );
    // A member sees the started lobby with its match.
    expect((await call(a, 'GET', '/v1/lobbies/current')).json()).toMatchObject({
      state: 'STARTED',
      matchId: lobby.matchId,
    });
  });

  it('places unarranged members on the smallest team, and a ranked lobby makes a rated match', async () => {
    const [owner, a] = await Promise.all([player(), player()]);
    const created = await create(owner, { mode: 'duel', ranked: true, region: 'us-east' });
    expect(created).toMatchObject({ ranked: true, region: 'us-east', size: 2 });
    await call(a, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode });
    const started = (await call(owner, 'POST', '/v1/lobbies/current/start')).json<LobbyResponse>();
    expect(started.members.map((m) => m.team)).toEqual([0, 1]);
    const [match] = await api.ds.query<{ region: string; rated: boolean }[]>(
      `SELECT region, rated FROM matches WHERE id = $1`,
      [started.matchId],
    );
    // The region asked for, though nobody measured it.
    expect(match).toEqual({ region: 'us-east', rated: true });
  });

  it('refuses a lobby for an unknown mode, a region not offered, or an impossible size', async () => {
    const owner = await player();
    await refused(() => call(owner, 'POST', '/v1/lobbies', { mode: 'nope' }), 422, 'UNKNOWN_MODE');
    const region = await refused(
      () => call(owner, 'POST', '/v1/lobbies', { mode: 'duel', region: 'mars' }),
      422,
      'LOBBY_REGION_NOT_OFFERED',
    );
    expect(region.detail).toContain('eu-west');
    await refused(
      () => call(owner, 'POST', '/v1/lobbies', { mode: 'duel', size: 3 }),
      400,
      'VALIDATION_FAILED',
    );
    await refused(
      () => call(owner, 'POST', '/v1/lobbies', { mode: 'duel', ranked: 'yes' }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('holds an asymmetric mode’s teams to their own sizes', async () => {
    const [owner, a, b, c] = await Promise.all([player(), player(), player(), player()]);
    // hunt:3+1 seats four, not two teams of three.
    await refused(
      () => call(owner, 'POST', '/v1/lobbies', { mode: 'hunt', size: 5 }),
      400,
      'VALIDATION_FAILED',
    );
    const created = await create(owner, { mode: 'hunt' });
    expect(created).toMatchObject({ size: 4, teamSize: 3, teamSizes: [3, 1] });
    for (const member of [a, b, c]) {
      const joined = await call(member, 'POST', '/v1/lobbies/join', {
        inviteCode: created.inviteCode,
      });
      expect(joined.statusCode).toBe(200);
    }
    await refused(
      () =>
        call(owner, 'POST', '/v1/lobbies/current/teams', {
          teams: [[owner.playerId], [a.playerId, b.playerId, c.playerId]],
        }),
      422,
      'LOBBY_TEAMS_INVALID',
    );
    // Unarranged, each member goes where the most room is left: three hunters, one hunted.
    const started = (await call(owner, 'POST', '/v1/lobbies/current/start')).json<LobbyResponse>();
    const teamOf = new Map(started.members.map((m) => [m.playerId, m.team]));
    expect([owner, a, b, c].map((p) => teamOf.get(p.playerId))).toEqual([0, 0, 0, 1]);
  });

  it('refuses a wrong invite code, a full lobby, a second lobby and a queued player', async () => {
    const [owner, a, b, queued] = await Promise.all([player(), player(), player(), player()]);
    const duel = await create(owner, { mode: 'duel' });
    await call(a, 'POST', '/v1/lobbies/join', { inviteCode: duel.inviteCode });
    await refused(
      () => call(b, 'POST', '/v1/lobbies/join', { inviteCode: `mpl_${'A'.repeat(22)}` }),
      404,
      'LOBBY_INVITE_INVALID',
    );
    await refused(
      () => call(b, 'POST', '/v1/lobbies/join', { inviteCode: 'not-a-code' }),
      400,
      'VALIDATION_FAILED',
    );
    await refused(
      () => call(b, 'POST', '/v1/lobbies/join', { inviteCode: duel.inviteCode }),
      409,
      'LOBBY_FULL',
    );
    const other = await create(b);
    await refused(
      () => call(a, 'POST', '/v1/lobbies/join', { inviteCode: other.inviteCode }),
      409,
      'LOBBY_ALREADY_JOINED',
    );
    await refused(
      () => call(a, 'POST', '/v1/lobbies', { mode: 'duel' }),
      409,
      'LOBBY_ALREADY_JOINED',
    );

    expect((await api.enqueue(queued.token, 'duel')).statusCode).toBe(201);
    const problem = await refused(
      () => call(queued, 'POST', '/v1/lobbies/join', { inviteCode: other.inviteCode }),
      409,
      'LOBBY_PLAYER_QUEUED',
    );
    expect(problem.playerId).toBe(queued.playerId);
    await refused(
      () => call(queued, 'POST', '/v1/lobbies', { mode: 'duel' }),
      409,
      'LOBBY_PLAYER_QUEUED',
    );
  });

  it('lets one of many racing joins take the last place, and one of two racing starts win', async () => {
    const [owner, ...racers] = await Promise.all([player(), player(), player(), player()]);
    const created = await create(owner, { mode: 'duel' });
    const joins = await Promise.all(
      racers.map((racer) =>
        call(racer, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode }),
      ),
    );
    expect(joins.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    for (const lost of joins.filter((r) => r.statusCode === 409)) {
      expect(lost.json<ProblemDetails>().code).toBe('LOBBY_FULL');
    }
    const starts = await Promise.all([
      call(owner, 'POST', '/v1/lobbies/current/start'),
      call(owner, 'POST', '/v1/lobbies/current/start'),
    ]);
    expect(starts.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const [rows] = await api.ds.query<{ matches: number; tickets: number }[]>(
      `SELECT (SELECT count(*)::int FROM match_participants p
                 JOIN lobbies l ON l.match_id = p.match_id WHERE l.id = $1) AS matches,
              (SELECT count(*)::int FROM queue_tickets t
                 JOIN lobby_members m ON m.ticket_id = t.id WHERE m.lobby_id = $1) AS tickets`,
      [created.lobbyId],
    );
    // One match of the two members, and their two tickets: the losing start wrote nothing.
    expect(rows).toEqual({ matches: 2, tickets: 2 });
    const [all] = await api.ds.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM queue_tickets WHERE player_id = $1`,
      [owner.playerId],
    );
    expect(all?.count).toBe(1);
  });

  it('refuses owner actions to members and to players in no lobby', async () => {
    const [owner, a, outsider] = await Promise.all([player(), player(), player()]);
    await lobbyOf(owner, a);
    for (const [url, body] of [
      ['/v1/lobbies/current/start', undefined],
      ['/v1/lobbies/current/kick', { playerId: owner.playerId }],
      ['/v1/lobbies/current/teams', { teams: [[owner.playerId], [a.playerId]] }],
    ] as const) {
      await refused(() => call(a, 'POST', url, body), 403, 'LOBBY_OWNER_ONLY');
      await refused(() => call(outsider, 'POST', url, body), 404, 'LOBBY_NOT_FOUND');
    }
    await refused(() => call(outsider, 'GET', '/v1/lobbies/current'), 404, 'LOBBY_NOT_FOUND');
    await refused(
      () => call(outsider, 'POST', '/v1/lobbies/current/leave'),
      404,
      'LOBBY_NOT_FOUND',
    );
  });

  it('refuses teams that do not fit the mode or name a stranger, and a start with an empty team', async () => {
    const [owner, a, b, stranger] = await Promise.all([player(), player(), player(), player()]);
    await lobbyOf(owner, a, b);
    const teams = (value: unknown) => () =>
      call(owner, 'POST', '/v1/lobbies/current/teams', { teams: value });
    await refused(
      teams([[owner.playerId], [a.playerId], [b.playerId]]),
      422,
      'LOBBY_TEAMS_INVALID',
    );
    await refused(
      teams([[owner.playerId, a.playerId, b.playerId], []]),
      422,
      'LOBBY_TEAMS_INVALID',
    );
    await refused(teams([[owner.playerId], [a.playerId]]), 422, 'LOBBY_TEAMS_INVALID');
    await refused(
      teams([
        [owner.playerId, b.playerId],
        [a.playerId, owner.playerId],
      ]),
      422,
      'LOBBY_TEAMS_INVALID',
    );
    await refused(
      teams([
        [owner.playerId, b.playerId],
        [a.playerId, stranger.playerId],
      ]),
      404,
      'LOBBY_NOT_MEMBER',
    );
    await refused(teams([['not-a-uuid']]), 400, 'VALIDATION_FAILED');
    await refused(
      () => call(owner, 'POST', '/v1/lobbies/current/kick', { playerId: stranger.playerId }),
      404,
      'LOBBY_NOT_MEMBER',
    );
    await refused(
      () => call(owner, 'POST', '/v1/lobbies/current/kick', { playerId: owner.playerId }),
      400,
      'VALIDATION_FAILED',
    );

    // Alone in a 2-team mode: no match of one team.
    const solo = await player();
    await create(solo);
    await refused(
      () => call(solo, 'POST', '/v1/lobbies/current/start'),
      422,
      'LOBBY_TEAMS_INVALID',
    );
  });

  it('refuses a start while a member holds a live ticket, then starts once it ended', async () => {
    const [owner, a] = await Promise.all([player(), player()]);
    const created = await create(owner, { mode: 'duel' });
    expect(
      (await call(a, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode })).statusCode,
    ).toBe(200);
    // A member may not queue meanwhile without the start noticing.
    const ticket = (await api.enqueue(a.token, 'duel')).json<{ id: string }>();
    const problem = await refused(
      () => call(owner, 'POST', '/v1/lobbies/current/start'),
      409,
      'LOBBY_PLAYER_QUEUED',
    );
    expect(problem.playerId).toBe(a.playerId);
    const cancelled = await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
      token: a.token,
      idempotencyKey: `cancel-${ticket.id}`,
    });
    expect(cancelled.statusCode).toBe(200);
    const started = (await call(owner, 'POST', '/v1/lobbies/current/start')).json<LobbyResponse>();
    expect(started.state).toBe('STARTED');

    // The operator's capture of queue arrivals (what the simulator replays) lists the ticket a
    // queued, not the lobby's tickets, which never waited in the queue.
    const { arrivals } = await api.app
      .get(TicketArrivals)
      .page({ from: new Date(Date.now() - 60_000), until: new Date(Date.now() + 60_000) }, 1_000);
    const listed = new Set(arrivals.map((arrival) => arrival.ticketId));
    expect(listed.has(ticket.id)).toBe(true);
    for (const member of started.members) expect(listed.has(member.ticketId as string)).toBe(false);
  });

  it("refuses a start while an operator holds the mode or the match's region, as it refuses an enqueue", async () => {
    const admin = api.app.get(QueueControlsAdmin);
    const [owner, a] = await Promise.all([player(), player()]);
    const created = await create(owner, { mode: 'duel', region: 'us-west' });
    await call(a, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode });
    const start = () => call(owner, 'POST', '/v1/lobbies/current/start');
    const reason = { reason: 'lobby test' };
    await admin.apply('pause', { scope: 'mode', name: 'duel' }, 'ops', reason);
    try {
      await refused(start, 409, 'QUEUE_PAUSED');
    } finally {
      await admin.apply('resume', { scope: 'mode', name: 'duel' }, 'ops', reason);
    }
    await admin.apply('drain', { scope: 'region', name: 'us-west' }, 'ops', reason);
    try {
      await refused(start, 409, 'QUEUE_DRAINING');
    } finally {
      await admin.apply('resume', { scope: 'region', name: 'us-west' }, 'ops', reason);
    }
    expect((await start()).statusCode).toBe(200);
  });

  it('refuses every change once started, and another lobby while its match runs', async () => {
    const [owner, a, b] = await Promise.all([player(), player(), player()]);
    const created = await lobbyOf(owner, a);
    const started = (await call(owner, 'POST', '/v1/lobbies/current/start')).json<LobbyResponse>();
    expect(started.state).toBe('STARTED');
    await refused(
      () => call(owner, 'POST', '/v1/lobbies/current/start'),
      409,
      'LOBBY_ALREADY_STARTED',
    );
    await refused(
      () => call(owner, 'POST', '/v1/lobbies/current/kick', { playerId: a.playerId }),
      409,
      'LOBBY_ALREADY_STARTED',
    );
    await refused(() => call(a, 'POST', '/v1/lobbies/current/leave'), 409, 'LOBBY_ALREADY_STARTED');
    await refused(
      () => call(b, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode }),
      404,
      'LOBBY_INVITE_INVALID',
    );
    // While its match runs, a member holds its live ticket: no other lobby (test/e2e/lobby.spec.ts
    // makes one once the match is over).
    await refused(
      () => call(a, 'POST', '/v1/lobbies', { mode: 'duel' }),
      409,
      'LOBBY_PLAYER_QUEUED',
    );
  });

  it('lets a member leave, the owner kick, and closes the lobby when its owner leaves', async () => {
    const [owner, a, b] = await Promise.all([player(), player(), player()]);
    const created = await lobbyOf(owner, a, b);
    expect((await call(a, 'POST', '/v1/lobbies/current/leave')).statusCode).toBe(204);
    const kicked = await call(owner, 'POST', '/v1/lobbies/current/kick', { playerId: b.playerId });
    expect(kicked.json<LobbyResponse>().members.map((m) => m.playerId)).toEqual([owner.playerId]);
    await refused(() => call(b, 'GET', '/v1/lobbies/current'), 404, 'LOBBY_NOT_FOUND');
    expect((await call(owner, 'POST', '/v1/lobbies/current/leave')).statusCode).toBe(204);
    await refused(
      () => call(a, 'POST', '/v1/lobbies/join', { inviteCode: created.inviteCode }),
      404,
      'LOBBY_INVITE_INVALID',
    );
  });
});

describe('lobbies left idle', () => {
  const ttlSeconds = 1;
  let api: PlayerApi;

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES, LOBBY_TTL_SECONDS: String(ttlSeconds) });
  });

  afterAll(async () => {
    await api?.close();
  });

  it('forgets a lobby left idle past LOBBY_TTL_SECONDS', async () => {
    const [owner, a] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    for (const session of [owner, a])
      expect((await api.probe(session.token, 'eu-west')).statusCode).toBe(200);
    const call = (session: SessionResponse, method: 'GET' | 'POST', url: string, body?: unknown) =>
      api.request(method, url, { token: session.token, ...(body ? { body } : {}) });
    const created = await call(owner, 'POST', '/v1/lobbies', { mode: 'pair' });
    expect(created.statusCode).toBe(201);
    const { lobbyId, inviteCode } = created.json<LobbyResponse>();
    // Idle for longer than the TTL (no change pushed its expiry back).
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 500));
    const joined = await call(a, 'POST', '/v1/lobbies/join', { inviteCode });
    expect(joined.json<ProblemDetails>()).toMatchObject({ code: 'LOBBY_INVITE_INVALID' });
    expect(joined.statusCode).toBe(404);
    const current = await call(owner, 'GET', '/v1/lobbies/current');
    expect(current.json<ProblemDetails>()).toMatchObject({ code: 'LOBBY_NOT_FOUND' });
    // The owner is free again: its new lobby replaces (and deletes) the expired one.
    const again = await call(owner, 'POST', '/v1/lobbies', { mode: 'pair' });
    expect(again.statusCode).toBe(201);
    const rows = await api.ds.query<{ id: string }[]>(
      `SELECT id FROM lobbies WHERE owner_id = $1`,
      [owner.playerId],
    );
    expect(rows.map((row) => row.id)).toEqual([again.json<LobbyResponse>().lobbyId]);
    expect(lobbyId).not.toBe(again.json<LobbyResponse>().lobbyId);
  });
});
