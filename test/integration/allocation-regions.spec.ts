import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type AssignmentResponse,
  type MatchEventsResponse,
  type ServerHandOff,
  type TicketResponse,
} from '@matchplane/contracts';
import { MetricsRegistry } from '@matchplane/observability';
import { AllocationService } from '../../apps/allocator/src/allocation.service';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  allocationRegion,
  CapturingHandOff,
  commitMatch,
  countRows,
  KeyFiles,
  matchEventPayloads,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startInProcessAllocator,
  ticketStates,
  waitForHandOff,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

/**
 * Region-aware allocation with the static provider configured per region: a match is hosted in
 * its own region; when that region is full, the fallback policy picks the next-best region for
 * its players by the RTT the API measured (probes answered late measure as far), or fails the
 * match. Players, probes and tickets go through the real routes; the dispatcher and allocator
 * are the real modules; the game server's side is its real routes.
 */
const POOL =
  'eu-west=eu-1=127.0.0.1:7401;us-east=us-1=127.0.0.1:7501,us-2=127.0.0.1:7502;ap-southeast=ap-1=127.0.0.1:7601';

describe(`${AllocationService.name} by region`, () => {
  const keys = new KeyFiles();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;

  beforeAll(async () => {
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  function startAllocator(handOff: CapturingHandOff, env: Record<string, string> = {}) {
    return startInProcessAllocator(
      api,
      {
        JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
        JOIN_ACTIVE_KEY_ID: 'k1',
        ALLOCATION_PROVIDER: 'static',
        STATIC_SERVERS_BY_REGION: POOL,
        STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
        ALLOCATION_FALLBACK_MAX_RTT_MS: '150',
        ALLOCATION_MAX_ATTEMPTS: '3',
        ...env,
      },
      { handOff },
    );
  }

  /** The server registers (as a game server does), then each player reads its assignment. */
  async function registerAndAssign(
    given: ServerHandOff,
    matchId: string,
    players: readonly QueuedPlayer[],
  ): Promise<AssignmentResponse[]> {
    const registered = await serverCall(
      api,
      'POST',
      ServerRoutes.register(given.serverId),
      given.credential,
      { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:regions' },
    );
    expect(registered.json()).toMatchObject({ matchId, state: 'ASSIGNMENT_READY' });
    const assignments: AssignmentResponse[] = [];
    for (const player of players) {
      const answer = await api.request('GET', `/v1/matches/${matchId}/assignment`, {
        token: player.token,
      });
      expect(answer.statusCode).toBe(200);
      assignments.push(answer.json<AssignmentResponse>());
    }
    return assignments;
  }

  const allocatedRegion = (matchId: string) => allocationRegion(api.ds, matchId);

  /** (to, region, serverRegion) of each match.state_changed the match wrote. */
  async function eventRegions(matchId: string) {
    return (await matchEventPayloads(api.ds, matchId)).map((payload) => [
      payload.to,
      payload.region,
      payload.serverRegion,
    ]);
  }

  async function fallbacksCounted(allocator: InProcessAllocator) {
    const metric = allocator.app
      .get(MetricsRegistry)
      .getSingleMetric('allocation_region_fallbacks_total');
    return ((await metric?.get())?.values ?? []).map((value) => ({
      ...value.labels,
      count: value.value,
    }));
  }

  function waitForFailure(matchId: string) {
    return waitFor(
      async () => {
        const state = await matchState(api.ds, matchId);
        return state.state === 'FAILED' ? state : undefined;
      },
      { timeoutMs: 30_000, what: `match ${matchId} to fail` },
    );
  }

  describe('with ALLOCATION_REGION_FALLBACK=nearest (the default)', () => {
    const handOff = new CapturingHandOff();
    let allocator: InProcessAllocator;

    beforeAll(async () => {
      allocator = await startAllocator(handOff);
    });

    afterAll(async () => {
      await allocator?.close();
    });

    it("hosts each match on a server of its own region and says so in the assignment and the match's events", async () => {
      const usPlayers = await queuePlayers(api, 2, 'duel', { 'us-east': 0, 'eu-west': 0 });
      const usMatch = await commitMatch(api, usPlayers, 'duel', undefined, 'us-east');
      const euPlayers = await queuePlayers(api, 2, 'duel', { 'eu-west': 0, 'us-east': 0 });
      const euMatch = await commitMatch(api, euPlayers, 'duel', undefined, 'eu-west');

      const usGiven = await waitForHandOff(handOff, usMatch);
      expect(['us-1', 'us-2']).toContain(usGiven.serverId);
      const euGiven = await waitForHandOff(handOff, euMatch);
      expect(euGiven).toMatchObject({ serverId: 'eu-1', endpoint: '127.0.0.1:7401' });
      expect(await allocatedRegion(usMatch)).toBe('us-east');
      expect(await allocatedRegion(euMatch)).toBe('eu-west');

      for (const assignment of await registerAndAssign(usGiven, usMatch, usPlayers)) {
        expect(assignment).toMatchObject({
          region: 'us-east',
          serverRegion: 'us-east',
          serverId: usGiven.serverId,
        });
      }
      await registerAndAssign(euGiven, euMatch, euPlayers);
      expect(await eventRegions(usMatch)).toEqual([
        ['ALLOCATING', 'us-east', undefined],
        ['PROCESS_READY', 'us-east', 'us-east'],
        ['ASSIGNMENT_READY', 'us-east', 'us-east'],
      ]);
      expect(await fallbacksCounted(allocator)).toEqual([]);
    });

    it("falls back to the region nearest its players when the match's region is full, and records where", async () => {
      // eu-1, the only eu-west server, serves the previous test's eu-west match. Measured: eu-west
      // at once, ap-southeast ~30 ms, us-east ~100 ms: ap-southeast is the better fallback.
      const players = await queuePlayers(api, 2, 'duel', {
        'eu-west': 0,
        'ap-southeast': 30,
        'us-east': 100,
      });
      const matchId = await commitMatch(api, players, 'duel', undefined, 'eu-west');
      const given = await waitForHandOff(handOff, matchId);
      expect(given).toMatchObject({ serverId: 'ap-1', endpoint: '127.0.0.1:7601' });
      expect(await allocatedRegion(matchId)).toBe('ap-southeast');

      for (const assignment of await registerAndAssign(given, matchId, players)) {
        expect(assignment).toMatchObject({ region: 'eu-west', serverRegion: 'ap-southeast' });
      }
      expect(await eventRegions(matchId)).toEqual([
        ['ALLOCATING', 'eu-west', undefined],
        ['PROCESS_READY', 'eu-west', 'ap-southeast'],
        ['ASSIGNMENT_READY', 'eu-west', 'ap-southeast'],
      ]);
      // What a client catching up is sent says so too.
      const history = await api.request('GET', `/v1/matches/${matchId}/events?after=0`, {
        token: players[0]!.token,
      });
      expect(
        history
          .json<MatchEventsResponse>()
          .messages.map((message) => [
            message.state,
            message.type === 'event' ? message.serverRegion : message.type,
          ]),
      ).toEqual([
        ['ALLOCATING', undefined],
        ['PROCESS_READY', 'ap-southeast'],
        ['ASSIGNMENT_READY', 'ap-southeast'],
      ]);
      expect(await fallbacksCounted(allocator)).toEqual([
        { from: 'eu-west', to: 'ap-southeast', count: 1 },
      ]);
    });

    it('fails the match ALLOCATION_FAILED, tickets requeued, when every region with a free server is past the worst-RTT limit', async () => {
      // eu-west and ap-southeast are full; us-east has a free server but measures ~400 ms.
      const players = await queuePlayers(api, 2, 'duel', { 'eu-west': 0, 'us-east': 400 });
      const ticket = await api.request('GET', `/v1/queue/tickets/${players[0]!.ticket.id}`, {
        token: players[0]!.token,
      });
      expect(ticket.json<TicketResponse>().predictedRttMs['us-east'] ?? 0).toBeGreaterThan(150);
      const matchId = await commitMatch(api, players, 'duel', undefined, 'eu-west');
      expect((await waitForFailure(matchId)).failure_reason).toBe('ALLOCATION_FAILED');
      expect(await countRows(api.ds, 'allocations', matchId)).toBe(0);
      expect(Object.values(await ticketStates(api.ds, matchId))).toEqual([
        'SEARCHING',
        'SEARCHING',
      ]);
      expect(await fallbacksCounted(allocator)).toContainEqual(
        expect.objectContaining({ from: 'eu-west', to: 'none' }),
      );
    });
  });

  describe('with ALLOCATION_REGION_FALLBACK=none', () => {
    const handOff = new CapturingHandOff();
    let allocator: InProcessAllocator;

    beforeAll(async () => {
      allocator = await startAllocator(handOff, { ALLOCATION_REGION_FALLBACK: 'none' });
    });

    afterAll(async () => {
      await allocator?.close();
    });

    it('fails the match ALLOCATION_FAILED when its region is full, though a near region has a free server', async () => {
      const players = await queuePlayers(api, 2, 'duel', { 'eu-west': 0, 'us-east': 0 });
      const matchId = await commitMatch(api, players, 'duel', undefined, 'eu-west');
      expect((await waitForFailure(matchId)).failure_reason).toBe('ALLOCATION_FAILED');
      expect(await countRows(api.ds, 'allocations', matchId)).toBe(0);
      expect(handOff.latest(matchId)).toBeUndefined();
      expect(Object.values(await ticketStates(api.ds, matchId))).toEqual([
        'SEARCHING',
        'SEARCHING',
      ]);
      expect(await fallbacksCounted(allocator)).toEqual([]);

      // The region's own server is still given out: a us-east match gets the free us-east one.
      const usPlayers = await queuePlayers(api, 2, 'duel', { 'us-east': 0 });
      const usMatch = await commitMatch(api, usPlayers, 'duel', undefined, 'us-east');
      expect(['us-1', 'us-2']).toContain((await waitForHandOff(handOff, usMatch)).serverId);
    });
  });
});
