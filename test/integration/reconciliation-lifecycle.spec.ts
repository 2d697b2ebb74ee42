import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { DataSource, type EntityManager } from 'typeorm';
import { loadConfig } from '@matchplane/config';
import { MaintenanceConfig } from '../../apps/maintenance/src/maintenance.config';
import type { TicketResponse } from '@matchplane/contracts';
import {
  BackfillStore,
  MatchLifecycle,
  MatchPresenceService,
  MatchStore,
} from '@matchplane/matches';
import { PlayerStore } from '@matchplane/players';
import { OutboxSignal, OutboxWriter, outboxWakeChannel } from '@matchplane/outbox';
import { dataSourceOptions, runInTransaction } from '@matchplane/persistence';
import { CandidateProjection, TicketLiveness, TicketStore } from '@matchplane/tickets';
import {
  AllocationReleaser,
  markAllocationReleased,
  type FinishedMatchAllocation,
} from '@matchplane/allocation';
import {
  LifecycleReconciler,
  type ReconciliationPassReport,
} from '../../apps/maintenance/src/reconciliation/lifecycle.reconciler';
import {
  buildLifecycleReconciler,
  reconciliationOptions,
} from '../../apps/maintenance/src/reconciliation/reconciliation.module';
import type { MaintenanceReconciliationOptions } from '../../apps/maintenance/src/reconciliation/reconciliation-stage.registry';
import { TestFactories } from '../support/factories';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import { testRedis } from '../support/redis';

/*
 * Lifecycle reconciliation over the real stores. Tickets come from the real queue routes; matches
 * are formed, allocated and moved on by the factories (test/support/factories.ts) through the
 * stores the matcher, the allocator and the game-server routes write with. Rows are aged by
 * handing the reconciler a later `now`, never by editing timestamps. Each test has its own
 * database, so the counts a pass reports are exactly this test's.
 */

const DEFAULTS = reconciliationOptions(loadConfig(MaintenanceConfig, {}));
const SECOND = 1_000;

/** Records every release and marks the row, as a provider-backed releaser would after its call. */
class RecordingReleaser extends AllocationReleaser {
  readonly released: FinishedMatchAllocation[] = [];
  failFor = new Set<string>();

  async release(allocation: FinishedMatchAllocation, manager: EntityManager): Promise<'released'> {
    if (this.failFor.has(allocation.matchId)) throw new Error('provider unavailable');
    this.released.push(allocation);
    await markAllocationReleased(manager, allocation.matchId);
    return 'released';
  }
}

interface OutboxEvent {
  event: string;
  revision: string;
  player_ids: string[];
  payload: { from: string | null; to: string; reason?: string; matchId?: string };
}

interface TicketRow {
  id: string;
  state: string;
  match_id: string | null;
  enqueued_at: Date;
  finished_at: Date | null;
}

const later = (ms: number) => new Date(Date.now() + ms);

describe(LifecycleReconciler.name, () => {
  let api: PlayerApi;
  let signal: OutboxSignal;
  let tickets: TicketStore;
  let projection: CandidateProjection;
  let matches: MatchStore;
  let f: TestFactories;
  let releaser: RecordingReleaser;
  const extraDataSources: DataSource[] = [];
  const subscribers: Redis[] = [];
  /** Session tokens of the players `queued` made, by player id. */
  const tokens = new Map<string, string>();

  beforeEach(async () => {
    api = await startPlayerApi();
    signal = api.app.get(OutboxSignal);
    tickets = api.app.get(TicketStore);
    projection = api.app.get(CandidateProjection);
    matches = api.app.get(MatchStore, { strict: false });
    f = TestFactories.of(api);
    releaser = new RecordingReleaser();
  });

  /** Counts messages on a Redis channel from now on; closed after the test. */
  async function listen(channel: string): Promise<{ count: number }> {
    const subscriber = testRedis();
    subscribers.push(subscriber);
    const received = { count: 0 };
    subscriber.on('message', () => (received.count += 1));
    await subscriber.subscribe(channel);
    return received;
  }

  afterEach(async () => {
    for (const subscriber of subscribers.splice(0)) subscriber.disconnect();
    for (const ds of extraDataSources.splice(0)) await ds.destroy();
    await api.close();
  });

  /** A reconciler as the module builds it, over `ds` (another replica's pool) if given. */
  function reconciler(
    overrides: Partial<MaintenanceReconciliationOptions> = {},
    ds: DataSource = api.ds,
  ): LifecycleReconciler {
    const ownMatches = new MatchStore(ds, new OutboxWriter(), signal);
    const lifecycle = new MatchLifecycle(
      ds,
      ownMatches,
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
        presence: new MatchPresenceService(ds, ownMatches, lifecycle, new OutboxWriter(), signal),
        releaser,
      },
      { ...DEFAULTS, ...overrides },
    );
  }

  async function replicaDataSource(): Promise<DataSource> {
    const ds = new DataSource(dataSourceOptions(api.db.config, { applicationName: 'replica-2' }));
    await ds.initialize();
    extraDataSources.push(ds);
    return ds;
  }

  async function queued(count: number): Promise<TicketResponse[]> {
    const out: TicketResponse[] = [];
    for (let i = 0; i < count; i += 1) {
      const player = await api.newPlayer();
      await api.probe(player.token, 'eu-west');
      const response = await api.enqueue(player.token, 'duel');
      if (response.statusCode !== 201) throw new Error(`enqueue: ${response.body}`);
      const ticket = response.json<TicketResponse>();
      tokens.set(ticket.playerId, player.token);
      out.push(ticket);
    }
    return out;
  }

  /** A duel formed as the matcher commits one: the match and both tickets MATCHED, then projected. */
  async function formMatch(
    pair?: TicketResponse[],
  ): Promise<{ matchId: string; pair: TicketResponse[] }> {
    const players = pair ?? (await queued(2));
    return { matchId: await f.match(players.map((t) => t.id)), pair: players };
  }

  const events = (aggregateId: string) =>
    api.ds.query<OutboxEvent[]>(
      `SELECT event, revision, player_ids, payload FROM outbox WHERE aggregate_id = $1 ORDER BY revision`,
      [aggregateId],
    );

  const lastEvent = async (aggregateId: string) => (await events(aggregateId)).at(-1);

  const ticketRows = (ids: string[]) =>
    api.ds.query<TicketRow[]>(
      `SELECT id, state, match_id, enqueued_at, finished_at FROM queue_tickets WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    );

  const matchRow = async (matchId: string) =>
    (
      await api.ds.query<{ state: string; failure_reason: string | null; revision: string }[]>(
        `SELECT state, failure_reason, revision FROM matches WHERE id = $1`,
        [matchId],
      )
    )[0];

  const allocationState = async (matchId: string) =>
    (
      await api.ds.query<{ state: string; released_at: Date | null }[]>(
        `SELECT state, released_at FROM allocations WHERE match_id = $1`,
        [matchId],
      )
    )[0];

  /** The cases a report says it acted on (zero counts left out). */
  const acted = (report: ReconciliationPassReport) =>
    Object.fromEntries(
      Object.entries(report.reconciled).filter(([, count]) => count > 0),
    ) as Record<string, number>;

  it("ends a ticket that searched past its mode's timeout, heartbeats notwithstanding, with its reason", async () => {
    const [searching] = await queued(1);
    const redis = api.app.get<Redis>(Redis);
    // Heartbeats never look stale here: only the search timeout can end the ticket.
    const options = { heartbeatTimeoutMs: 3_600_000, searchTimeoutsMs: { duel: 60 * SECOND } };
    expect(acted(await reconciler(options).pass({ now: later(55 * SECOND) }))).toEqual({});
    // A mode with no timeout searches on.
    const untimed = await reconciler({ ...options, searchTimeoutsMs: {} }).pass({
      now: later(1_800 * SECOND),
    });
    expect(acted(untimed)).toEqual({});

    const report = await reconciler(options).pass({ now: later(61 * SECOND) });
    expect(acted(report)).toEqual({ ticket_search_timeout: 1 });
    expect((await ticketRows([searching!.id]))[0]!.state).toBe('EXPIRED');
    expect((await lastEvent(searching!.id))?.payload).toMatchObject({
      from: 'SEARCHING',
      to: 'EXPIRED',
      reason: 'SEARCH_TIMED_OUT',
    });
    const answer = await api.request('GET', `/v1/queue/tickets/${searching!.id}`, {
      token: tokens.get(searching!.playerId)!,
    });
    expect(answer.json()).toMatchObject({ state: 'EXPIRED', endReason: 'SEARCH_TIMED_OUT' });
    expect(await redis.zrange(projection.modeIndexKey('duel'), 0, -1)).not.toContain(searching!.id);
    // Again: nothing left to end.
    expect(acted(await reconciler(options).pass({ now: later(120 * SECOND) }))).toEqual({});
  });

  it('expires searching tickets that missed their heartbeats, writes each event and takes them out of the candidate pool', async () => {
    const silent = await queued(3);
    const ids = silent.map((t) => t.id);
    const redis = api.app.get<Redis>(Redis);
    expect(await redis.zrange(projection.modeIndexKey('duel'), 0, -1)).toEqual(
      expect.arrayContaining(ids),
    );

    // Within the timeout nothing happens: the domain's own heartbeat rule and the query agree.
    const early = await reconciler().pass({ now: later(DEFAULTS.heartbeatTimeoutMs - 5 * SECOND) });
    expect(acted(early)).toEqual({});

    const wakeUps = await listen(outboxWakeChannel(api.prefix));
    const report = await reconciler().pass({ now: later(DEFAULTS.heartbeatTimeoutMs + SECOND) });
    expect(acted(report)).toEqual({ ticket_heartbeat_timeout: 3 });
    // The relay is woken after the commit, not left to its polling backstop.
    await waitFor(async () => Promise.resolve(wakeUps.count > 0 ? true : undefined));
    expect(report.itemFailures).toEqual([]);
    expect(report.stageErrors).toEqual([]);

    const rows = await ticketRows(ids);
    expect(rows.map((row) => row.state)).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
    expect(rows.every((row) => row.finished_at !== null)).toBe(true);
    for (const t of silent) {
      const history = await events(t.id);
      expect(history.map((e) => [e.event, e.revision, e.payload.to])).toEqual([
        ['ticket.state_changed', '1', 'SEARCHING'],
        ['ticket.state_changed', '2', 'EXPIRED'],
      ]);
      expect(history[1]!.payload).toMatchObject({ from: 'SEARCHING', reason: 'HEARTBEAT_TIMEOUT' });
      expect(history[1]!.player_ids).toEqual([t.playerId]);
      expect(await projection.candidate(t.id)).toBeUndefined();
      // The player is told why through the real ticket route.
      const seen = await api.request('GET', `/v1/queue/tickets/${t.id}`, {
        token: tokens.get(t.playerId)!,
      });
      expect(seen.json()).toMatchObject({ state: 'EXPIRED', endReason: 'HEARTBEAT_TIMEOUT' });
    }
    const indexed = await redis.zrange(projection.modeIndexKey('duel'), 0, -1);
    expect(indexed.filter((id) => ids.includes(id))).toEqual([]);

    // Idempotent: a second pass finds nothing, writes nothing.
    const again = await reconciler().pass({ now: later(DEFAULTS.heartbeatTimeoutMs + SECOND) });
    expect(acted(again)).toEqual({});
    expect((await events(ids[0]!)).length).toBe(2);
  });

  it('leaves a ticket that heartbeated alone, and never expires a matched one', async () => {
    const [beating] = await queued(1);
    const { pair } = await formMatch();
    // Its heartbeat lands after the others' last one: at `now` it is just inside the timeout.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const player = await api.request('POST', `/v1/queue/tickets/${beating!.id}/heartbeat`, {
      token: tokens.get(beating!.playerId)!,
      idempotencyKey: randomUUID(),
    });
    expect(player.statusCode).toBe(200);
    const beatAt = new Date(player.json<TicketResponse>().lastHeartbeatAt).getTime();

    const report = await reconciler().pass({
      now: new Date(beatAt + DEFAULTS.heartbeatTimeoutMs - 500),
    });
    expect(acted(report)).toEqual({});
    const rows = await ticketRows([beating!.id, ...pair.map((t) => t.id)]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.state]))).toEqual({
      [beating!.id]: 'SEARCHING',
      [pair[0]!.id]: 'MATCHED',
      [pair[1]!.id]: 'MATCHED',
    });
  });

  it('fails a match stuck ALLOCATING with ALLOCATION_FAILED and requeues its tickets at their original priority', async () => {
    const { matchId, pair } = await formMatch();
    const before = await ticketRows(pair.map((t) => t.id));
    // Long heartbeat timeout: the requeued tickets must not also expire in the second pass below.
    const options = { heartbeatTimeoutMs: 3_600_000 };

    const early = await reconciler(options).pass({
      now: later(DEFAULTS.allocatingTimeoutMs - 5 * SECOND),
    });
    expect(acted(early)).toEqual({});
    expect((await matchRow(matchId))?.state).toBe('ALLOCATING');

    const report = await reconciler(options).pass({
      now: later(DEFAULTS.allocatingTimeoutMs + SECOND),
    });
    expect(acted(report)).toEqual({ allocating_allocation_failed: 1 });
    expect(await matchRow(matchId)).toEqual({
      state: 'FAILED',
      failure_reason: 'ALLOCATION_FAILED',
      revision: '2',
    });
    const matchEvent = await lastEvent(matchId);
    expect(matchEvent).toMatchObject({
      event: 'match.state_changed',
      revision: '2',
      payload: { from: 'ALLOCATING', to: 'FAILED', reason: 'ALLOCATION_FAILED' },
    });
    expect([...matchEvent!.player_ids].sort()).toEqual(pair.map((t) => t.playerId).sort());

    const after = await ticketRows(pair.map((t) => t.id));
    expect(after.map((t) => [t.state, t.match_id])).toEqual([
      ['SEARCHING', null],
      ['SEARCHING', null],
    ]);
    expect(after.map((t) => t.enqueued_at.getTime())).toEqual(
      before.map((t) => t.enqueued_at.getTime()),
    );
    for (const t of pair) {
      expect((await lastEvent(t.id))?.payload).toMatchObject({
        from: 'MATCHED',
        to: 'SEARCHING',
        reason: 'MATCH_FAILED',
        matchId,
      });
      // Back in the candidate pool, at its old place in the queue.
      expect((await projection.candidate(t.id))?.enqueuedAt.getTime()).toBe(
        new Date(t.enqueuedAt).getTime(),
      );
    }

    const again = await reconciler(options).pass({
      now: later(DEFAULTS.allocatingTimeoutMs + SECOND),
    });
    expect(acted(again)).toEqual({});
    expect((await events(matchId)).length).toBe(2);
  });

  it('fails an ALLOCATING match whose allocated server never registered with SERVER_REGISTRATION_TIMEOUT, and releases that server', async () => {
    const { matchId, pair } = await formMatch();
    await f.allocate(matchId);

    const report = await reconciler({ heartbeatTimeoutMs: 3_600_000 }).pass({
      now: later(DEFAULTS.allocatingTimeoutMs + SECOND),
    });
    expect(acted(report)).toEqual({ allocating_registration_timeout: 1, allocation_released: 1 });
    expect(await matchRow(matchId)).toMatchObject({
      state: 'FAILED',
      failure_reason: 'SERVER_REGISTRATION_TIMEOUT',
    });
    expect((await ticketRows(pair.map((t) => t.id))).map((t) => t.state)).toEqual([
      'SEARCHING',
      'SEARCHING',
    ]);
    expect(releaser.released).toEqual([
      expect.objectContaining({ matchId, state: 'ALLOCATED', matchState: 'FAILED' }),
    ]);
    expect((await allocationState(matchId))?.state).toBe('RELEASED');
  });

  it('fails a match stuck PROCESS_READY with SERVER_REGISTRATION_TIMEOUT and requeues its tickets', async () => {
    const { matchId, pair } = await formMatch();
    await f.advanceMatch(matchId, 'PROCESS_READY');

    const report = await reconciler({ heartbeatTimeoutMs: 3_600_000 }).pass({
      now: later(DEFAULTS.allocatingTimeoutMs + SECOND),
    });
    expect(acted(report)).toEqual({ process_ready_registration_timeout: 1 });
    expect(await lastEvent(matchId)).toMatchObject({
      revision: '3',
      payload: { from: 'PROCESS_READY', to: 'FAILED', reason: 'SERVER_REGISTRATION_TIMEOUT' },
    });
    expect((await ticketRows(pair.map((t) => t.id))).map((t) => t.state)).toEqual([
      'SEARCHING',
      'SEARCHING',
    ]);
  });

  it('fails an ASSIGNMENT_READY match nobody connected to by the connect deadline with NO_SHOW, ending its tickets', async () => {
    const { matchId, pair } = await formMatch();
    await f.advanceMatch(matchId, 'ASSIGNMENT_READY');

    const early = await reconciler().pass({ now: later(DEFAULTS.connectDeadlineMs - 5 * SECOND) });
    expect(acted(early)).toEqual({});

    const report = await reconciler().pass({ now: later(DEFAULTS.connectDeadlineMs + SECOND) });
    expect(acted(report)).toEqual({ assignment_ready_no_show: 1 });
    expect(await lastEvent(matchId)).toMatchObject({
      payload: { from: 'ASSIGNMENT_READY', to: 'FAILED', reason: 'NO_SHOW' },
    });
    // Handed a server and never there: no requeue, and the no-show plan of the initial-connect
    // route: each ticket FAILED NO_SHOW, the roster marks each a no-show, each player cooled down.
    const after = await ticketRows(pair.map((t) => t.id));
    expect(after.map((t) => t.state)).toEqual(['FAILED', 'FAILED']);
    for (const t of pair) {
      expect((await lastEvent(t.id))?.payload).toMatchObject({
        from: 'ASSIGNED',
        to: 'FAILED',
        reason: 'NO_SHOW',
      });
    }
    const roster = await api.ds.query<{ no_show: boolean; connected_at: Date | null }[]>(
      `SELECT no_show, connected_at FROM match_participants WHERE match_id = $1`,
      [matchId],
    );
    expect(roster).toEqual([
      { no_show: true, connected_at: null },
      { no_show: true, connected_at: null },
    ]);
    // The next enqueue through the real API meets the cooldown.
    for (const t of pair) {
      const refused = await api.enqueue(tokens.get(t.playerId)!, 'duel');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 'COOLDOWN_ACTIVE' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('fails an ASSIGNMENT_READY match whose connect was recorded but that never started with LIFECYCLE_TIMEOUT, not NO_SHOW', async () => {
    const { matchId, pair } = await formMatch();
    await f.advanceMatch(matchId, 'ASSIGNMENT_READY');
    // What the initial-connect route records for a player who joined.
    await runInTransaction(api.ds, (manager) =>
      matches.recordConnections(
        manager,
        matchId,
        { connected: [pair[0]!.playerId], noShows: [] },
        new Date(),
      ),
    );

    const report = await reconciler().pass({ now: later(DEFAULTS.connectDeadlineMs + SECOND) });
    expect(acted(report)).toEqual({ assignment_ready_lifecycle_timeout: 1 });
    expect((await matchRow(matchId))?.failure_reason).toBe('LIFECYCLE_TIMEOUT');
  });

  it('fails a match IN_PROGRESS past the maximum duration with LIFECYCLE_TIMEOUT and releases its server', async () => {
    const { matchId, pair } = await formMatch();
    await f.allocate(matchId);
    await f.advanceMatch(matchId, 'IN_PROGRESS');

    const early = await reconciler().pass({
      now: later(DEFAULTS.maxMatchDurationMs - 60 * SECOND),
    });
    expect(acted(early)).toEqual({});
    expect((await allocationState(matchId))?.state).toBe('ALLOCATED');

    const report = await reconciler().pass({ now: later(DEFAULTS.maxMatchDurationMs + SECOND) });
    expect(acted(report)).toEqual({ in_progress_lifecycle_timeout: 1, allocation_released: 1 });
    expect(await lastEvent(matchId)).toMatchObject({
      payload: { from: 'IN_PROGRESS', to: 'FAILED', reason: 'LIFECYCLE_TIMEOUT' },
    });
    expect((await ticketRows(pair.map((t) => t.id))).map((t) => t.state)).toEqual([
      'FAILED',
      'FAILED',
    ]);
    expect((await allocationState(matchId))?.state).toBe('RELEASED');
  });

  it('releases the live allocation of every ended match through the port, once, and no other', async () => {
    const completed = await formMatch();
    await f.allocate(completed.matchId);
    await f.advanceMatch(completed.matchId, 'COMPLETED');
    const cancelled = await formMatch();
    await f.allocate(cancelled.matchId);
    await f.cancelMatch(cancelled.matchId);
    const live = await formMatch();
    await f.allocate(live.matchId);
    await f.advanceMatch(live.matchId, 'IN_PROGRESS');

    const report = await reconciler().pass({ now: new Date() });
    expect(acted(report)).toEqual({ allocation_released: 2 });
    expect(releaser.released.map((a) => [a.matchId, a.state, a.matchState]).sort()).toEqual(
      [
        [completed.matchId, 'ALLOCATED', 'COMPLETED'],
        [cancelled.matchId, 'ALLOCATED', 'CANCELLED'],
      ].sort(),
    );
    expect((await allocationState(completed.matchId))?.released_at).toBeInstanceOf(Date);
    expect((await allocationState(live.matchId))?.state).toBe('ALLOCATED');

    const again = await reconciler().pass({ now: new Date() });
    expect(acted(again)).toEqual({});
    expect(releaser.released).toHaveLength(2);
  });

  it('leaves an item it cannot end for the next pass and goes on with the rest', async () => {
    const first = await formMatch();
    const second = await formMatch();
    for (const m of [first, second]) {
      await f.allocate(m.matchId);
      await f.advanceMatch(m.matchId, 'COMPLETED');
    }
    releaser.failFor.add(first.matchId);

    const report = await reconciler().pass({ now: new Date() });
    expect(acted(report)).toEqual({ allocation_released: 1 });
    expect(report.itemFailures).toEqual([
      expect.objectContaining({
        stage: 'finished_allocations',
        id: first.matchId,
        message: 'provider unavailable',
      }),
    ]);
    expect((await allocationState(first.matchId))?.state).toBe('ALLOCATED');

    releaser.failFor.clear();
    const retried = await reconciler().pass({ now: new Date() });
    expect(acted(retried)).toEqual({ allocation_released: 1 });
    expect((await allocationState(first.matchId))?.state).toBe('RELEASED');
  });

  it('skips a ticket another transaction holds instead of waiting for it, and takes it at the next pass', async () => {
    const silent = await queued(3);
    const held = silent[0]!.id;
    const now = later(DEFAULTS.heartbeatTimeoutMs + SECOND);
    const holder = api.ds.createQueryRunner();
    await holder.startTransaction();
    try {
      await holder.query(`SELECT 1 FROM queue_tickets WHERE id = $1 FOR UPDATE`, [held]);
      const started = Date.now();
      const report = await reconciler().pass({ now });
      // Well under the 1 s lock timeout a wait would end in.
      expect(Date.now() - started).toBeLessThan(900);
      expect(acted(report)).toEqual({ ticket_heartbeat_timeout: 2 });
      expect(report.stageErrors).toEqual([]);
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await ticketRows([held]))[0]?.state).toBe('SEARCHING');
    const next = await reconciler().pass({ now });
    expect(acted(next)).toEqual({ ticket_heartbeat_timeout: 1 });
  });

  it('two reconcilers over the same backlog end each item exactly once', async () => {
    const silent = await queued(24);
    const stuck: { matchId: string; pair: TicketResponse[] }[] = [];
    for (let i = 0; i < 6; i += 1) {
      const formed = await formMatch();
      await f.allocate(formed.matchId);
      stuck.push(formed);
    }
    // Small batches, so the two interleave over many transactions.
    const options = { batchSize: 4, heartbeatTimeoutMs: DEFAULTS.heartbeatTimeoutMs };
    const other = await replicaDataSource();
    const now = later(DEFAULTS.allocatingTimeoutMs + SECOND);

    const reports = await Promise.all([
      reconciler(options).pass({ now }),
      reconciler(options, other).pass({ now }),
    ]);

    const total = (name: string) =>
      reports.reduce((sum, report) => sum + (report.reconciled[name] ?? 0), 0);
    // The requeued tickets' heartbeats are as old as the silent ones': whichever replica meets
    // them SEARCHING again may expire them too, so only the 24 are counted exactly here.
    expect(total('allocating_registration_timeout')).toBe(6);
    expect(total('allocation_released')).toBe(6);
    expect(reports.flatMap((report) => report.itemFailures)).toEqual([]);
    expect(reports.flatMap((report) => report.stageErrors)).toEqual([]);

    const [expiredEvents] = await api.ds.query<{ n: number; tickets: number }[]>(
      `SELECT count(*)::int AS n, count(DISTINCT aggregate_id)::int AS tickets FROM outbox
        WHERE aggregate_id = ANY($1::uuid[]) AND payload->>'to' = 'EXPIRED'`,
      [silent.map((t) => t.id)],
    );
    expect(expiredEvents).toEqual({ n: 24, tickets: 24 });
    for (const { matchId } of stuck) {
      const failed = (await events(matchId)).filter((e) => e.payload.to === 'FAILED');
      expect(failed).toHaveLength(1);
    }
    expect(new Set(releaser.released.map((a) => a.matchId)).size).toBe(6);
    expect(releaser.released).toHaveLength(6);
    // Each requeued ticket moved once (one SEARCHING requeue event), whichever replica did it.
    for (const t of stuck.flatMap((m) => m.pair)) {
      const requeues = (await events(t.id)).filter(
        (e) => e.payload.from === 'MATCHED' && e.payload.to === 'SEARCHING',
      );
      expect(requeues).toHaveLength(1);
    }
  });
});
