import { DataSource } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type ServerHandOff,
  type TicketResponse,
} from '@matchplane/contracts';
import {
  BackfillStore,
  MatchLifecycle,
  MatchPresenceService,
  MatchStore,
  ServerLossReconciler,
} from '@matchplane/matches';
import { OutboxSignal, OutboxWriter } from '@matchplane/outbox';
import { PlayerStore } from '@matchplane/players';
import { dataSourceOptions } from '@matchplane/persistence';
import { TicketLiveness, TicketStore } from '@matchplane/tickets';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import type { LifecycleReconciler } from '../../apps/maintenance/src/reconciliation/lifecycle.reconciler';
import { QueuedAllocationReleaser } from '../../apps/maintenance/src/reconciliation/queued-allocation.releaser';
import {
  buildLifecycleReconciler,
  reconciliationOptions,
} from '../../apps/maintenance/src/reconciliation/reconciliation.module';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { StatementCounter } from '../support/statement-counter';
import {
  allocationState,
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
  waitForRelease,
  type InProcessAllocator,
  type QueuedPlayer,
} from '../support/allocation-harness';

/*
 * Server liveness (issue 30) over the real routes and workers: matches are allocated by the real
 * allocator (static provider), registered and reported on through the real game-server routes,
 * heartbeated through POST /v1/servers/{id}/heartbeat, and reconciled by the maintenance app's
 * reconciler as its module builds it (the release handed to the allocator's release worker).
 * Silence is real time (a 1 s timeout), never an edited timestamp.
 */

const TIMEOUT_MS = 1_000;
const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface MatchEvent {
  revision: string;
  player_ids: string[];
  payload: { from: string; to: string; reason?: string };
}

describe(ServerLossReconciler.name, () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;
  let releaser: QueuedAllocationReleaser;
  const extraDataSources: DataSource[] = [];

  beforeAll(async () => {
    api = await startPlayerApi({ QUEUE_MODES: 'duel:1x2', NO_SHOW_COOLDOWN_BASE_SECONDS: '60' });
    dispatcher = await startDispatcherFor(api);
    allocator = await startStaticAllocator(api, keys, handOff, { servers: 8, firstPort: 7300 });
    releaser = new QueuedAllocationReleaser(
      loadConfig(MaintenanceConfig, { ...api.db.env, REDIS_KEY_PREFIX: api.prefix }),
    );
  });

  afterAll(async () => {
    for (const ds of extraDataSources) await ds.destroy();
    await releaser?.onModuleDestroy();
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  /** The maintenance app's reconciler (every stage) over `ds`, with the test's short timeout. */
  function reconciler(ds: DataSource = api.ds): LifecycleReconciler {
    const signal = api.app.get(OutboxSignal);
    const tickets = api.app.get(TicketStore);
    const matches = new MatchStore(ds, new OutboxWriter(), signal);
    const lifecycle = new MatchLifecycle(
      ds,
      matches,
      tickets,
      new PlayerStore(),
      new BackfillStore(new OutboxWriter(), signal),
    );
    return buildLifecycleReconciler(
      {
        dataSource: ds,
        tickets,
        liveness: api.app.get(TicketLiveness),
        lifecycle,
        presence: new MatchPresenceService(ds, matches, lifecycle, new OutboxWriter(), signal),
        releaser,
      },
      {
        ...reconciliationOptions(loadConfig(MaintenanceConfig, {})),
        serverHeartbeatTimeoutMs: TIMEOUT_MS,
      },
    );
  }

  interface RunningMatch {
    matchId: string;
    players: QueuedPlayer[];
    server: ServerHandOff;
  }

  /** A duel allocated by the allocator and registered through the route (ASSIGNMENT_READY). */
  async function registered(): Promise<RunningMatch> {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const server = await waitForHandOff(handOff, matchId);
    const answer = await serverCall(
      api,
      'POST',
      ServerRoutes.register(server.serverId),
      server.credential,
      REGISTER,
    );
    expect(answer.json()).toMatchObject({ state: 'ASSIGNMENT_READY' });
    return { matchId, players, server };
  }

  /** Registered, and every player reported connected (IN_PROGRESS). */
  async function inProgress(): Promise<RunningMatch> {
    const match = await registered();
    const answer = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(match.server.serverId),
      match.server.credential,
      { connectedPlayerIds: match.players.map((player) => player.playerId) },
    );
    expect(answer.json()).toMatchObject({ state: 'IN_PROGRESS' });
    return match;
  }

  const heartbeat = (match: RunningMatch, serverId = match.server.serverId) =>
    serverCall(api, 'POST', ServerRoutes.heartbeat(serverId), match.server.credential);

  /** Heartbeats every 200 ms while `ms` pass, as a live server does. */
  async function keepAlive(matches: RunningMatch[], ms: number): Promise<void> {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(200)) {
      for (const match of matches) expect((await heartbeat(match)).statusCode).toBe(200);
    }
    for (const match of matches) expect((await heartbeat(match)).statusCode).toBe(200);
  }

  const events = (matchId: string) =>
    api.ds.query<MatchEvent[]>(
      `SELECT revision, player_ids, payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
      [matchId],
    );

  it("fails a silent server's match SERVER_LOST, leaves a heartbeating one alone, and a second pass changes nothing", async () => {
    const alive = await inProgress();
    const silentPlaying = await inProgress();
    const silentWaiting = await registered();
    // A player who enqueues while they play: those whose server is lost are served ahead of them.
    const [later] = await queuePlayers(api, 1, 'duel');

    // The live server beats through more than the timeout; the others (never beating) go silent.
    await keepAlive([alive], TIMEOUT_MS + 300);
    const first = await reconciler().pass();
    expect(first.stageErrors).toEqual([]);
    expect(first.reconciled[ServerLossReconciler.CASE]).toBe(2);
    expect(first.reconciled.allocation_release_requested).toBe(2);

    expect(await matchState(api.ds, alive.matchId)).toMatchObject({ state: 'IN_PROGRESS' });
    expect(await allocationState(api.ds, alive.matchId)).toBe('ALLOCATED');
    for (const [lost, from] of [
      [silentPlaying, 'IN_PROGRESS'],
      [silentWaiting, 'ASSIGNMENT_READY'],
    ] as const) {
      expect(await matchState(api.ds, lost.matchId)).toEqual({
        state: 'FAILED',
        revision: from === 'IN_PROGRESS' ? 5 : 4,
        failure_reason: 'SERVER_LOST',
      });
      // Its event, in order after the rest, tells every participant.
      const last = (await events(lost.matchId)).at(-1);
      expect(last?.payload).toMatchObject({ from, to: 'FAILED', reason: 'SERVER_LOST' });
      expect([...(last?.player_ids ?? [])].sort()).toEqual(
        lost.players.map((player) => player.playerId).sort(),
      );
      expect(Object.values(await ticketStates(api.ds, lost.matchId))).toEqual(['FAILED', 'FAILED']);
      // Released at the provider through the allocator's release worker; the server is refused.
      await waitForRelease(api, lost.matchId);
      const refused = await heartbeat(lost);
      expect([refused.statusCode, refused.json().code]).toEqual([401, 'ALLOCATION_ENDED']);
    }

    // Running again changes nothing more (the live server still beating).
    const before = await Promise.all(
      [alive, silentPlaying, silentWaiting].map(async (m) => [
        await matchState(api.ds, m.matchId),
        (await events(m.matchId)).length,
      ]),
    );
    expect((await heartbeat(alive)).statusCode).toBe(200);
    const second = await reconciler().pass();
    expect(second.reconciled[ServerLossReconciler.CASE]).toBe(0);
    expect(second.reconciled.allocation_release_requested).toBe(0);
    const after = await Promise.all(
      [alive, silentPlaying, silentWaiting].map(async (m) => [
        await matchState(api.ds, m.matchId),
        (await events(m.matchId)).length,
      ]),
    );
    expect(after).toEqual(before);

    // The live server finishes its match (nothing of it left for the next test to sweep).
    const result = await serverCall(
      api,
      'POST',
      ServerRoutes.result(alive.server.serverId),
      alive.server.credential,
      { outcome: 'COMPLETED', winningTeam: 0 },
    );
    expect(result.json()).toMatchObject({ state: 'COMPLETED' });

    // No penalty: each player queues again at once, keeping the lost ticket's enqueue time, so
    // ahead of the player who enqueued meanwhile; the priority is spent by that ticket.
    for (const lost of [silentPlaying, silentWaiting]) {
      for (const player of lost.players) {
        const again = await api.enqueue(player.token, 'duel');
        expect(again.statusCode).toBe(201);
        const ticket = again.json<TicketResponse>();
        expect(ticket.enqueuedAt).toBe(player.ticket.enqueuedAt);
        expect(new Date(ticket.enqueuedAt) < new Date(later!.ticket.enqueuedAt)).toBe(true);
        const cancelled = await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
          token: player.token,
          idempotencyKey: `cancel-${ticket.id}`,
        });
        expect(cancelled.statusCode).toBe(200);
        const third = await api.enqueue(player.token, 'duel');
        expect(third.statusCode).toBe(201);
        expect(
          new Date(third.json<TicketResponse>().enqueuedAt) > new Date(later!.ticket.enqueuedAt),
        ).toBe(true);
        await api.request('DELETE', `/v1/queue/tickets/${third.json<TicketResponse>().id}`, {
          token: player.token,
          idempotencyKey: `cancel-${third.json<TicketResponse>().id}`,
        });
      }
    }
  });

  it('fails each silent match once when two reconcilers run at once', async () => {
    const silent = [await inProgress(), await inProgress(), await registered()];
    await sleep(TIMEOUT_MS + 300);
    const replica = new DataSource(
      dataSourceOptions(api.db.config, { applicationName: 'replica-2' }),
    );
    await replica.initialize();
    extraDataSources.push(replica);
    const passes = await Promise.all([reconciler().pass(), reconciler(replica).pass()]);
    expect(passes.map((pass) => pass.stageErrors)).toEqual([[], []]);
    expect(
      passes.reduce((sum, pass) => sum + (pass.reconciled[ServerLossReconciler.CASE] ?? 0), 0),
    ).toBe(3);
    for (const match of silent) {
      expect(await matchState(api.ds, match.matchId)).toMatchObject({
        failure_reason: 'SERVER_LOST',
      });
      const failed = (await events(match.matchId)).filter((event) => event.payload.to === 'FAILED');
      expect(failed).toHaveLength(1);
    }
  });

  // Last: its matches are left registered and silent, which the sweeps above would count.
  it('answers a heartbeat with the workload credential only, idempotently, stamping the database clock', async () => {
    const match = await registered();
    const other = await registered();
    expect(
      (await serverCall(api, 'POST', ServerRoutes.heartbeat(match.server.serverId), undefined))
        .statusCode,
    ).toBe(401);
    expect(
      (await serverCall(api, 'POST', ServerRoutes.heartbeat(match.server.serverId), 'nope'))
        .statusCode,
    ).toBe(401);
    const wrongServer = await heartbeat(match, other.server.serverId);
    expect([wrongServer.statusCode, wrongServer.json().code]).toEqual([403, 'FORBIDDEN']);
    const stamps = () =>
      api.ds.query<{ match_id: string; last_heartbeat_at: Date | null }[]>(
        `SELECT match_id, last_heartbeat_at FROM allocations WHERE match_id = ANY($1::uuid[])`,
        [[match.matchId, other.matchId]],
      );
    // A refused beat stamps nothing.
    expect((await stamps()).every((row) => row.last_heartbeat_at === null)).toBe(true);

    // One statement: the credential check is the heartbeat's UPDATE.
    const counter = new StatementCounter(api.app.get(DataSource));
    const { result: first, statements } = await counter
      .during(() => heartbeat(match))
      .finally(() => counter.stop());
    expect(statements).toEqual([
      expect.stringMatching(/^UPDATE allocations SET last_heartbeat_at/),
    ]);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ matchId: match.matchId, serverId: match.server.serverId });
    const second = await api.request(
      'POST',
      `/api/v1/${ServerRoutes.heartbeat(match.server.serverId)}`,
      {
        token: match.server.credential,
      },
    );
    expect([second.statusCode, second.json()]).toEqual([200, first.json()]);
    const rows = new Map((await stamps()).map((row) => [row.match_id, row.last_heartbeat_at]));
    expect(rows.get(match.matchId)).toBeInstanceOf(Date);
    expect(rows.get(other.matchId)).toBeNull();
    // A beat changes no state and emits nothing.
    expect(await matchState(api.ds, match.matchId)).toMatchObject({
      state: 'ASSIGNMENT_READY',
      revision: 3,
    });
    expect(await events(match.matchId)).toHaveLength(3);
  });
});
