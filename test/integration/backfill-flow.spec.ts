import { randomUUID } from 'node:crypto';
import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type AssignmentResponse,
  type BackfillConnectResponse,
  type BackfillResponse,
  type RosterResponse,
  type ServerHandOff,
  type TicketResponse,
} from '@matchplane/contracts';
import { JoinTokenVerifier } from '@matchplane/join-auth';
import { MatchLifecycle, OverdueBackfillReconciler } from '@matchplane/matches';
import type { MaintenanceReconciliationOptions } from '../../apps/maintenance/src/reconciliation/reconciliation-stage.registry';
import {
  commitMatch,
  matchState,
  queuePlayers,
  serverCall,
  ticketStates,
  waitForHandOff,
  type CapturingHandOff,
  type KeyFiles,
  type QueuedPlayer,
} from '../support/allocation-harness';
import { startBackfillPlane, type BackfillPlane } from '../support/backfill-plane';
import type { PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';

/*
 * Backfill through the production path (issue 14): a match of two teams of two loses a no-show at
 * initial connect and goes on; its server asks for the place to be filled; the real matcher fills
 * it from the queue, the real dispatcher hands the filled request to the real allocator, which
 * signs the added player's token and publishes roster revision 2; the server fetches and verifies
 * it, accepts it, the player is served its assignment, connects, and the match completes with
 * them. Nothing of the match, the request or the roster is seeded.
 */
/** The maintenance app's reconciliation options (only the batch size matters to this stage). */
const RECONCILIATION: MaintenanceReconciliationOptions = {
  batchSize: 10,
  passBudgetMs: 5_000,
  heartbeatTimeoutMs: 15_000,
  allocatingTimeoutMs: 60_000,
  connectDeadlineMs: 60_000,
  maxMatchDurationMs: 3_600_000,
  serverHeartbeatTimeoutMs: 10_000,
  searchTimeoutsMs: {},
  noShowPenalty: { baseMs: 60_000, capMs: 3_600_000, decayMs: 86_400_000 },
};

const ENV = {
  // hunt: teams of different sizes (mode shapes), team 0 of two players and team 1 of one.
  QUEUE_MODES: 'duel:1x2,pair:2x2,hunt:2+1',
  MATCH_MIN_CONNECTED_PER_TEAM: '1',
  // Cross-play pools (issue 34): players left at the default accept both platforms.
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    pair: {
      attributes: { platforms: { type: 'set', values: ['pc', 'ps'], default: ['pc', 'ps'] } },
      rules: [{ intersect: 'platforms' }],
    },
  }),
};

describe('backfill', () => {
  let plane: BackfillPlane;
  let api: PlayerApi;
  let keys: KeyFiles;
  let handOff: CapturingHandOff;
  let matcher: BackfillPlane['matcher'];

  beforeAll(async () => {
    plane = await startBackfillPlane(ENV, { servers: 4, firstPort: 7700 });
    ({ api, keys, handOff, matcher } = plane);
  });

  afterAll(() => plane?.close());

  const call = (
    given: ServerHandOff,
    method: 'GET' | 'POST' | 'DELETE',
    route: string,
    body?: unknown,
  ) => serverCall(api, method, route, given.credential, body);

  /**
   * A pair match through registration and an initial connect where players[1] (team 1) never
   * came; `platforms[i]`, when given, is players[i]'s set (team i % 2). With `hunt`, a 2 + 1
   * match whose players[1] (team 0) never came.
   */
  async function shortHandedMatch(
    platforms?: readonly string[][],
    hunt = false,
  ): Promise<{
    matchId: string;
    given: ServerHandOff;
    players: QueuedPlayer[];
    first: RosterResponse;
  }> {
    const mode = hunt ? 'hunt' : 'pair';
    const players = await queuePlayers(
      api,
      hunt ? 3 : 4,
      mode,
      undefined,
      platforms && ((i) => ({ platforms: platforms[i] })),
    );
    const teamOf = hunt ? (i: number) => (i < 2 ? 0 : 1) : undefined;
    const matchId = await commitMatch(api, players, mode, teamOf);
    const given = await waitForHandOff(handOff, matchId);
    const first = (
      await call(given, 'GET', ServerRoutes.roster(given.serverId))
    ).json<RosterResponse>();
    expect(first.revision).toBe(1);
    await call(given, 'POST', ServerRoutes.register(given.serverId), {
      protocolVersion: SERVER_PROTOCOL_VERSION,
      imageDigest: 'sha256:test',
    });
    const connect = await call(given, 'POST', ServerRoutes.initialConnect(given.serverId), {
      connectedPlayerIds: players.filter((_, i) => i !== 1).map((p) => p.playerId),
    });
    expect(connect.json()).toMatchObject({
      state: 'IN_PROGRESS',
      noShowPlayerIds: [players[1]!.playerId],
    });
    return { matchId, given, players, first };
  }

  function waitForRequest(
    given: ServerHandOff,
    requestId: string,
    state: BackfillResponse['state'],
  ): Promise<BackfillResponse> {
    return waitFor(
      async () => {
        const status = (
          await call(given, 'GET', ServerRoutes.backfill(given.serverId, requestId))
        ).json<BackfillResponse>();
        return status.state === state ? status : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: `backfill ${requestId} ${state}` },
    );
  }

  it("fills a no-show's place with a queued player who joins with a verified token and completes", async () => {
    const { matchId, given, players, first } = await shortHandedMatch();
    const serverId = given.serverId;

    // The team has one open place: two is refused, one is taken; a second request for it is not.
    const tooMany = await call(given, 'POST', ServerRoutes.backfills(serverId), {
      team: 1,
      slots: 2,
    });
    expect([tooMany.statusCode, tooMany.json().code]).toEqual([409, 'BACKFILL_NO_OPEN_SLOTS']);
    const opened = await call(given, 'POST', ServerRoutes.backfills(serverId), {
      team: 1,
      slots: 1,
      timeoutSeconds: 60,
    });
    expect(opened.statusCode).toBe(201);
    const request = opened.json<BackfillResponse>();
    expect(request).toMatchObject({ matchId, team: 1, slots: 1, state: 'OPEN', playerIds: [] });
    // The same request again (a retry whose answer was lost) is answered with the first;
    // another for the team is refused while the first is under way.
    const twice = await call(given, 'POST', ServerRoutes.backfills(serverId), {
      team: 1,
      slots: 1,
    });
    expect([twice.statusCode, twice.json<BackfillResponse>().requestId]).toEqual([
      200,
      request.requestId,
    ]);
    const other = await call(given, 'POST', ServerRoutes.backfills(serverId), {
      team: 1,
      slots: 2,
    });
    expect([other.statusCode, other.json().code]).toEqual([409, 'BACKFILL_CONFLICT']);

    // A player queues; the matcher's next pass adds them to the running match, not a new one.
    const [late] = await queuePlayers(api, 1, 'pair');
    const pass = (await matcher.loop.passNow('pair'))!;
    expect(pass.backfilled).toEqual([
      expect.objectContaining({ requestId: request.requestId, matchId }),
    ]);
    expect(pass.committed).toEqual([]);
    const ticket = await api.request('GET', `/v1/queue/tickets/${late!.ticket.id}`, {
      token: late!.token,
    });
    expect(ticket.json<TicketResponse>()).toMatchObject({ state: 'MATCHED', matchId });
    // Not served before the server took the revision in: it would refuse the player.
    const early = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
      token: late!.token,
    });
    expect([early.statusCode, early.json().code]).toEqual([409, 'ASSIGNMENT_NOT_READY']);

    // The allocator publishes revision 2: the whole current roster, the no-show gone, the
    // players already in keeping their tokens, the added player with a new one.
    const published = await waitForRequest(given, request.requestId, 'PUBLISHED');
    expect(published).toMatchObject({ playerIds: [late!.playerId], rosterRevision: 2 });
    const revised = (
      await call(given, 'GET', ServerRoutes.roster(serverId))
    ).json<RosterResponse>();
    expect(revised.revision).toBe(2);
    expect(revised.manifest.revision).toBe(2);
    const expected = [players[0], players[2], players[3], late].map((p) => p!.playerId).sort();
    expect(revised.entries.map((e) => e.playerId)).toEqual(expected);
    for (const entry of revised.entries) {
      const before = first.entries.find((e) => e.playerId === entry.playerId);
      if (before) expect(entry.joinToken).toBe(before.joinToken);
    }
    expect(revised.entries.find((e) => e.playerId === late!.playerId)?.team).toBe(1);
    const verifier = new JoinTokenVerifier(keys.keySet(['k1']));
    const now = Date.now();
    const expectation = { serverId, matchId, now };
    const entries = revised.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken }));
    expect(verifier.verifyRoster(revised.manifest, entries, expectation)).toMatchObject({
      ok: true,
    });
    // Revision 2's manifest served as revision 1 (or its roster reordered) does not verify.
    const { revision: _revision, ...asFirst } = revised.manifest;
    expect(verifier.verifyRoster(asFirst, entries, expectation)).toMatchObject({ ok: false });
    expect(
      verifier.verifyRoster(revised.manifest, [...entries].reverse(), expectation),
    ).toMatchObject({
      ok: false,
      reason: 'ROSTER_NOT_CANONICAL',
    });

    // Accepting another revision is refused; this one tells the player where to go.
    const wrong = await call(
      given,
      'POST',
      ServerRoutes.backfillAccept(serverId, request.requestId),
      {
        rosterRevision: 3,
      },
    );
    expect([wrong.statusCode, wrong.json().code]).toEqual([409, 'BACKFILL_CONFLICT']);
    const accepted = await call(
      given,
      'POST',
      ServerRoutes.backfillAccept(serverId, request.requestId),
      {
        rosterRevision: 2,
      },
    );
    expect(accepted.json<BackfillResponse>()).toMatchObject({ state: 'ASSIGNED' });
    const assignment = (
      await api.request('GET', `/v1/matches/${matchId}/assignment`, { token: late!.token })
    ).json<AssignmentResponse>();
    expect(assignment).toMatchObject({ matchId, team: 1, serverId, state: 'IN_PROGRESS' });
    expect(verifier.verify(assignment.joinToken, expectation)).toMatchObject({
      ok: true,
      claims: { playerId: late!.playerId, matchId },
    });

    const connected = await call(
      given,
      'POST',
      ServerRoutes.backfillConnect(serverId, request.requestId),
      {
        connectedPlayerIds: [late!.playerId],
      },
    );
    expect(connected.json<BackfillConnectResponse>()).toMatchObject({
      state: 'FILLED',
      noShowPlayerIds: [],
    });
    const result = await call(given, 'POST', ServerRoutes.result(serverId), {
      outcome: 'COMPLETED',
      winningTeam: 1,
      scores: { [late!.playerId]: 7 },
    });
    expect(result.json()).toMatchObject({ state: 'COMPLETED' });
    const states = await ticketStates(api.ds, matchId);
    expect(states[late!.playerId]).toBe('COMPLETED');
    expect(states[players[1]!.playerId]).toBe('FAILED');
    expect((await matchState(api.ds, matchId)).state).toBe('COMPLETED');
    // Every step was an event of the request, in order.
    const events = await api.ds.query<{ to: string }[]>(
      `SELECT payload->>'to' AS to FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
      [request.requestId],
    );
    expect(events.map((e) => e.to)).toEqual(['OPEN', 'MATCHED', 'PUBLISHED', 'ASSIGNED', 'FILLED']);
  });

  it('counts open places by each team of a mode of unequal teams', async () => {
    const { given } = await shortHandedMatch(undefined, true);
    const open = (team: number, slots: number) =>
      call(given, 'POST', ServerRoutes.backfills(given.serverId), { team, slots });
    // Team 1 is one player, all still in: no place, though team 0 (two players) has one.
    const full = await open(1, 1);
    expect([full.statusCode, full.json<{ detail: string }>().detail]).toEqual([
      409,
      expect.stringContaining('has 0 open places (1 of 1 players still in it)'),
    ]);
    const tooMany = await open(0, 2);
    expect(tooMany.json<{ detail: string }>().detail).toContain(
      'has 1 open places (1 of 2 players still in it), not 2',
    );
    expect((await open(0, 1)).statusCode).toBe(201);
  });

  it('backfills only a player who shares a platform with everyone still in the match', async () => {
    // Team 0: pc only, pc and ps; team 1: the no-show, then pc and ps. All still in share only pc.
    const { matchId, given } = await shortHandedMatch([['pc'], ['pc'], ['pc', 'ps'], ['pc', 'ps']]);
    const opened = await call(given, 'POST', ServerRoutes.backfills(given.serverId), {
      team: 1,
      slots: 1,
      timeoutSeconds: 60,
    });
    expect(opened.statusCode).toBe(201);
    // The older player shares ps with the team's own player, but nothing with the pc-only one.
    const [psOnly] = await queuePlayers(api, 1, 'pair', undefined, () => ({ platforms: ['ps'] }));
    const [pcOnly] = await queuePlayers(api, 1, 'pair', undefined, () => ({ platforms: ['pc'] }));
    const pass = (await matcher.loop.passNow('pair'))!;
    expect(pass.backfilled).toEqual([expect.objectContaining({ matchId })]);
    const stateOf = async (player: QueuedPlayer) =>
      (
        await api.request('GET', `/v1/queue/tickets/${player.ticket.id}`, { token: player.token })
      ).json<TicketResponse>().state;
    expect(await stateOf(pcOnly!)).toBe('MATCHED');
    expect(await stateOf(psOnly!)).toBe('SEARCHING');
    // Out of the queue, so the next test's requests find nobody.
    await api.request('DELETE', `/v1/queue/tickets/${psOnly!.ticket.id}`, {
      token: psOnly!.token,
      idempotencyKey: randomUUID(),
    });
  });

  it('expires a request nobody fits, and requeues the player of a request the server cancels', async () => {
    const { matchId, given } = await shortHandedMatch();
    const serverId = given.serverId;
    const opened = (
      await call(given, 'POST', ServerRoutes.backfills(serverId), {
        team: 1,
        slots: 1,
        timeoutSeconds: 1,
      })
    ).json<BackfillResponse>();
    // Nobody queued: the matcher leaves it OPEN, and past its deadline reconciliation expires it.
    await matcher.loop.passNow('pair');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const overdue = await new OverdueBackfillReconciler(
      api.ds,
      api.app.get(MatchLifecycle, { strict: false }),
      RECONCILIATION,
    ).batch(new Date());
    expect(overdue.reconciled).toMatchObject({ backfill_expired: 1 });
    expect(
      (await call(given, 'GET', ServerRoutes.backfill(serverId, opened.requestId))).json(),
    ).toMatchObject({ state: 'EXPIRED', reason: 'TIMED_OUT' });

    // A new request is filled, then cancelled before acceptance: the player searches again.
    const second = (
      await call(given, 'POST', ServerRoutes.backfills(serverId), {
        team: 1,
        slots: 1,
        timeoutSeconds: 60,
      })
    ).json<BackfillResponse>();
    const [late] = await queuePlayers(api, 1, 'pair');
    expect((await matcher.loop.passNow('pair'))!.backfilled).toHaveLength(1);
    const cancelled = await call(
      given,
      'DELETE',
      ServerRoutes.backfill(serverId, second.requestId),
    );
    expect(cancelled.json<BackfillResponse>()).toMatchObject({
      state: 'CANCELLED',
      reason: 'SERVER_CANCELLED',
    });
    const ticket = (
      await api.request('GET', `/v1/queue/tickets/${late!.ticket.id}`, { token: late!.token })
    ).json<TicketResponse>();
    expect(ticket.state).toBe('SEARCHING');
    const [requeue] = await api.ds.query<{ reason: string; from: string }[]>(
      `SELECT payload->>'reason' AS reason, payload->>'from' AS from FROM outbox
        WHERE aggregate_id = $1 ORDER BY revision DESC LIMIT 1`,
      [late!.ticket.id],
    );
    expect(requeue).toEqual({ reason: 'BACKFILL_CANCELLED', from: 'MATCHED' });
    expect((await matchState(api.ds, matchId)).state).toBe('IN_PROGRESS');
  });
});
