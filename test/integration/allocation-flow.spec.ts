import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type RegisterServerResponse,
  type AssignmentResponse,
  type RosterResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import { JoinTokenVerifier } from '@matchplane/join-auth';
import { AllocationService } from '../../apps/allocator/src/allocation.service';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  CapturingHandOff,
  commitMatch,
  countRows,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startInProcessAllocator,
  ticketStates,
  waitForHandOff,
  type InProcessAllocator,
} from '../support/allocation-harness';

/**
 * The production path from a committed match to the game server's own roster read: the matcher's
 * commit writes the match, the dispatcher's AllocationTriggerSubscriber enqueues the allocation,
 * the allocator (static provider) allocates, issues the credential, signs and publishes, and hands
 * the credential over; the server then reads and verifies its roster, registers, reports who
 * connected and the result. No table of the allocation is seeded.
 */
describe(AllocationService.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    allocator = await startInProcessAllocator(
      api,
      {
        JOIN_KEYS_FILE: keys.write('keys.json', ['mp-2026-01']),
        JOIN_ACTIVE_KEY_ID: 'mp-2026-01',
        ALLOCATION_PROVIDER: 'static',
        // One pooled server: a second match can only get it once the first released it.
        STATIC_SERVERS: 'gs-1=127.0.0.1:7777',
        STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
      },
      { handOff },
    );
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  it('takes a committed match through allocation to a roster the server verifies, and on to COMPLETED', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');

    const given = await waitForHandOff(handOff, matchId);
    expect(given).toMatchObject({ serverId: 'gs-1', matchId, endpoint: '127.0.0.1:7777' });
    // Published before the hand-off: one assignment per participant and one manifest.
    expect(await countRows(api.ds, 'assignments', matchId)).toBe(players.length);
    expect(await countRows(api.ds, 'roster_manifests', matchId)).toBe(1);
    expect(await countRows(api.ds, 'allocations', matchId)).toBe(1);

    const roster = await serverCall(api, 'GET', ServerRoutes.roster('gs-1'), given.credential);
    expect(roster.statusCode).toBe(200);
    const body = roster.json<RosterResponse>();
    expect(body).toMatchObject({
      matchId,
      serverId: 'gs-1',
      endpoint: '127.0.0.1:7777',
      mode: 'duel',
      region: 'eu-west',
    });
    expect(body.entries.map((e) => e.playerId).sort()).toEqual(
      players.map((p) => p.playerId).sort(),
    );

    // What the game server does with it: the manifest over the whole roster, then each token.
    const verifier = new JoinTokenVerifier(keys.keySet(['mp-2026-01']));
    const now = Date.now();
    const entries = body.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken }));
    expect(
      verifier.verifyRoster(body.manifest, entries, { serverId: 'gs-1', matchId, now }),
    ).toMatchObject({ ok: true });
    for (const entry of body.entries) {
      const verdict = verifier.verify(entry.joinToken, { serverId: 'gs-1', matchId, now });
      expect(verdict).toMatchObject({
        ok: true,
        claims: { playerId: entry.playerId, endpoint: '127.0.0.1:7777' },
      });
    }
    // A truncated roster fails verification even though each remaining token is valid.
    expect(
      verifier.verifyRoster(body.manifest, entries.slice(1), { serverId: 'gs-1', matchId, now }),
    ).toMatchObject({
      ok: false,
      reason: 'ROSTER_COUNT_MISMATCH',
    });

    // Players are told where to go only once the server registered.
    const early = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
      token: players[0]!.token,
    });
    expect(early.json()).toMatchObject({
      status: 409,
      code: 'ASSIGNMENT_NOT_READY',
      matchState: 'ALLOCATING',
    });

    const registered = await serverCall(
      api,
      'POST',
      ServerRoutes.register('gs-1'),
      given.credential,
      {
        protocolVersion: SERVER_PROTOCOL_VERSION,
        imageDigest: 'sha256:test',
      },
    );
    expect(registered.statusCode).toBe(200);
    expect(registered.json<RegisterServerResponse>()).toEqual({
      matchId,
      serverId: 'gs-1',
      state: 'ASSIGNMENT_READY',
      revision: 3,
    });
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['ASSIGNED', 'ASSIGNED']);
    for (const player of players) {
      const assignment = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
        token: player.token,
      });
      expect(assignment.statusCode).toBe(200);
      expect(assignment.json<AssignmentResponse>()).toMatchObject({
        matchId,
        state: 'ASSIGNMENT_READY',
        region: 'eu-west',
        serverId: 'gs-1',
        endpoint: '127.0.0.1:7777',
        joinToken: body.entries.find((e) => e.playerId === player.playerId)?.joinToken,
      });
    }
    const stranger = await api.newPlayer();
    const peek = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
      token: stranger.token,
    });
    expect(peek.statusCode).toBe(404);
    const ticket = await api.request('GET', `/v1/queue/tickets/${players[0]!.ticket.id}`, {
      token: players[0]!.token,
    });
    expect(ticket.json<TicketResponse>()).toMatchObject({ state: 'ASSIGNED', matchId });

    const connected = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect('gs-1'),
      given.credential,
      {
        connectedPlayerIds: players.map((p) => p.playerId),
      },
    );
    expect(connected.json()).toEqual({
      matchId,
      state: 'IN_PROGRESS',
      revision: 4,
      noShowPlayerIds: [],
    });
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['CONNECTED', 'CONNECTED']);

    const result = await serverCall(api, 'POST', ServerRoutes.result('gs-1'), given.credential, {
      outcome: 'COMPLETED',
      winningTeam: 1,
      scores: { [players[0]!.playerId]: 3, [players[1]!.playerId]: 5 },
    });
    expect(result.statusCode).toBe(200);
    expect(result.json()).toEqual({ matchId, state: 'COMPLETED', revision: 5 });
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['COMPLETED', 'COMPLETED']);
    const [allocation] = await api.ds.query<
      { state: string; reported_result: { outcome: string; winningTeam: number } }[]
    >(`SELECT state, reported_result FROM allocations WHERE match_id = $1`, [matchId]);
    expect(allocation).toMatchObject({
      state: 'RELEASED',
      reported_result: { outcome: 'COMPLETED', winningTeam: 1 },
    });
    // The allocation has ended, but its result route still answers for it: a different report is
    // refused naming the conflict, and nothing changes.
    const again = await serverCall(api, 'POST', ServerRoutes.result('gs-1'), given.credential, {
      outcome: 'COMPLETED',
    });
    expect([again.statusCode, again.json().code]).toEqual([409, 'RESULT_CONFLICT']);

    // The lease is free again: the next match gets the same pooled server.
    const next = await queuePlayers(api, 2, 'duel');
    const nextMatch = await commitMatch(api, next, 'duel');
    expect((await waitForHandOff(handOff, nextMatch)).serverId).toBe('gs-1');
    // The first match's credential is bound to its own, ended allocation: it cannot read the new roster.
    const stale = await serverCall(api, 'GET', ServerRoutes.roster('gs-1'), given.credential);
    expect([stale.statusCode, stale.json().code]).toEqual([401, 'ALLOCATION_ENDED']);
  });

  it('fails the match with ALLOCATION_FAILED after its attempts when no server is free, requeueing its tickets', async () => {
    // gs-1 still serves the previous test's second match.
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const failed = await waitFor(
      async () => {
        const state = await matchState(api.ds, matchId);
        return state.state === 'FAILED' ? state : undefined;
      },
      { timeoutMs: 30_000, what: 'the match to fail' },
    );
    expect(failed.failure_reason).toBe('ALLOCATION_FAILED');
    expect(await countRows(api.ds, 'allocations', matchId)).toBe(0);
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['SEARCHING', 'SEARCHING']);
    for (const player of players) {
      const ticket = await api.request('GET', `/v1/queue/tickets/${player.ticket.id}`, {
        token: player.token,
      });
      expect(ticket.json<TicketResponse>()).toMatchObject({ state: 'SEARCHING' });
    }
  });
});
