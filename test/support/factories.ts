import { randomBytes, randomUUID } from 'node:crypto';
import type { INestApplicationContext, Type } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  createMatch,
  createTicket,
  transitionMatch,
  transitionTicket,
  type DomainEvent,
} from '@matchplane/domain';
import {
  AllocationStore,
  RosterStore,
  type AllocationRecord,
  type PublishOutcome,
} from '@matchplane/allocation';
import {
  canonicalRosterOrder,
  JoinTokenSigner,
  KeySet,
  signProbeMeasurement,
} from '@matchplane/join-auth';
import { MatchLifecycle, MatchStore } from '@matchplane/matches';
import {
  envelopesFor,
  OutboxRepository,
  OutboxWriter,
  type OutboxSignal,
  type DeliveryResult,
  type OutboxEnvelope,
} from '@matchplane/outbox';
import { returnedRows, runInTransaction } from '@matchplane/persistence';
import {
  DEVICE_SECRET_PREFIX,
  newSecret,
  PlayerStore,
  secretHash,
  SessionStore,
  SESSION_TOKEN_PREFIX,
} from '@matchplane/players';
import { TicketStore, type CandidateProjection, type StoredTicket } from '@matchplane/tickets';
// The API owns these two tables (libs never import apps; tests may).
import { IdempotencyStore } from '@matchplane/idempotency';
import { ProbeRecorder } from '../../apps/api/src/probes/probe.recorder';
import { ProbeMeasurementKeys } from '../../apps/api/src/probes/probe-measurement.keys';
import { ProbeMeasurementRecorder } from '../../apps/api/src/probes/probe-measurement.recorder';
import type { PlayerApi } from './player-api';

/*
 * Test data made by the production writers, never by INSERTs of the test's own: a test that seeds
 * a table some production code is supposed to write can pass while that code writes nothing (a
 * missing hand-off hides). Each factory goes through the store or service that owns the table
 * (PlayerStore, SessionStore, ProbeRecorder, IdempotencyStore, TicketStore, MatchStore,
 * MatchLifecycle, AllocationStore, RosterStore, OutboxWriter, OutboxRepository), so a broken
 * writer fails the tests built on it.
 *
 * Time: the ticket and match writers take the transition's `now`, and are given it. Where a
 * writer stamps the database's (or the wall) clock itself (created_at, published_at,
 * dead_lettered_at, a probe's issue time), a retention test that needs an old row creates it
 * through the writer and then ages it with one UPDATE of those timestamp columns only: nothing
 * else about the row is the test's.
 */

const DEFAULT_REGION = 'eu-west';
const MINUTE = 60_000;

const minus = (at: Date, ms: number) => new Date(at.getTime() - ms);

/** Where the factories find the production writers: an app's module graph, or built by hand. */
type WriterSource = <T>(type: Type<T> | (abstract new (...args: never[]) => T)) => T;

/**
 * A match's way forward, as registration, the initial-connect report and the result move it
 * (ServerLifecycleService, at the wall clock; {@link TestFactories.advanceMatch} dates each step).
 */
export type ForwardMatchState = 'PROCESS_READY' | 'ASSIGNMENT_READY' | 'IN_PROGRESS' | 'COMPLETED';

const FORWARD: readonly ForwardMatchState[] = [
  'PROCESS_READY',
  'ASSIGNMENT_READY',
  'IN_PROGRESS',
  'COMPLETED',
];
/** Where the tickets of a match go with each forward step (none at PROCESS_READY). */
const TICKET_STEP: Partial<Record<ForwardMatchState, 'ASSIGNED' | 'CONNECTED' | 'COMPLETED'>> = {
  ASSIGNMENT_READY: 'ASSIGNED',
  IN_PROGRESS: 'CONNECTED',
  COMPLETED: 'COMPLETED',
};

/** A match and its participants' tickets, in the order they were matched. */
export interface FormedMatch {
  matchId: string;
  ticketIds: string[];
}

export class TestFactories {
  private signer?: JoinTokenSigner;

  private constructor(
    readonly ds: DataSource,
    private readonly writer: WriterSource,
  ) {}

  /** Factories over the API's real module graph in process (every writer, the projection too). */
  static of(api: PlayerApi): TestFactories {
    return TestFactories.ofApp(api.app, api.ds);
  }

  /**
   * Over an app's module graph; writers it does not hold (the API has no dispatcher, so no
   * OutboxRepository) are built over its DataSource as their modules build them.
   */
  static ofApp(app: INestApplicationContext, ds: DataSource): TestFactories {
    const own = new Map<unknown, unknown>([
      [OutboxRepository, new OutboxRepository(ds)],
      [AllocationStore, new AllocationStore()],
      [RosterStore, new RosterStore()],
    ]);
    return new TestFactories(ds, (type) => {
      try {
        return app.get(type, { strict: false });
      } catch (error) {
        if (own.has(type)) return own.get(type) as never;
        throw error;
      }
    });
  }

  /**
   * Factories over a bare test database: the stores built as their modules build them. The ticket
   * and match stores wake relays through `signal` (without one they are not available); the ticket
   * store also refreshes `projection` (without one it is not available). No match lifecycle or
   * probe recorder here (they need the app's graph): use {@link TestFactories.of} for those.
   */
  static standalone(
    ds: DataSource,
    signal?: OutboxSignal,
    projection?: CandidateProjection,
  ): TestFactories {
    const outbox = new OutboxWriter();
    const built = new Map<unknown, unknown>([
      [PlayerStore, new PlayerStore()],
      [SessionStore, new SessionStore(ds)],
      [AllocationStore, new AllocationStore()],
      [RosterStore, new RosterStore()],
      [IdempotencyStore, new IdempotencyStore(ds)],
      [OutboxWriter, outbox],
      [OutboxRepository, new OutboxRepository(ds)],
    ]);
    if (signal) built.set(MatchStore, new MatchStore(ds, outbox, signal));
    if (signal && projection) built.set(TicketStore, new TicketStore(outbox, signal, projection));
    return new TestFactories(ds, (type) => {
      const writer = built.get(type);
      if (!writer) throw new Error(`${type.name}: not available to these standalone factories`);
      return writer as never;
    });
  }

  // -------------------------------------------------------------------------------------------
  // Players

  /** A guest player, as POST /v1/sessions creates one. */
  player(): Promise<string> {
    return this.writer(PlayerStore).createGuest(
      this.ds.manager,
      secretHash(newSecret(DEVICE_SECRET_PREFIX)),
    );
  }

  /** A session of the player expiring at `expiresAt`, revoked at `revokedAt` if given. */
  async session(playerId: string, times: { expiresAt: Date; revokedAt?: Date }): Promise<string> {
    const sessions = this.writer(SessionStore);
    const id = await sessions.create(
      this.ds.manager,
      playerId,
      secretHash(newSecret(SESSION_TOKEN_PREFIX)),
      times.expiresAt,
    );
    if (times.revokedAt) await sessions.revoke(id, times.revokedAt);
    return id;
  }

  /**
   * A probe challenge issued (and `answered`, 1 ms later) through the probe recorder; with
   * `expiresAt`, aged so it expires then (the recorder stamps the wall clock).
   */
  async probeChallenge(
    playerId: string,
    options: { expiresAt?: Date; answered?: boolean; region?: string } = {},
  ): Promise<string> {
    const probes = this.writer(ProbeRecorder);
    const region = options.region ?? DEFAULT_REGION;
    const issued = await probes.issue(playerId, region, new Date());
    await issued.settled;
    if (options.answered) {
      await probes.answer(
        playerId,
        region,
        { challengeId: issued.challengeId, nonce: issued.nonce },
        new Date(issued.issuedAt.getTime() + 1),
      );
    }
    if (!options.expiresAt) return issued.challengeId;
    const shift = issued.expiresAt.getTime() - options.expiresAt.getTime();
    await this.ds.query(
      `UPDATE probe_challenges
          SET issued_at = issued_at - $2 * interval '1 millisecond',
              expires_at = expires_at - $2 * interval '1 millisecond',
              answered_at = answered_at - $2 * interval '1 millisecond'
        WHERE id = $1`,
      [issued.challengeId, shift],
    );
    return issued.challengeId;
  }

  /**
   * A probe edge measurement signed with the API's own probe key set and recorded through the
   * measurement recorder; with `recordedAt`, aged to it.
   */
  async probeMeasurement(playerId: string, options: { recordedAt?: Date } = {}): Promise<string> {
    const { keys } = this.writer(ProbeMeasurementKeys);
    if (keys === null) throw new Error('probeMeasurement: the API holds no probe key set');
    const measurement = signProbeMeasurement(keys, keys.ids()[0]!, {
      measurementId: randomUUID(),
      playerId,
      region: DEFAULT_REGION,
      samplesMs: [20],
      measuredAt: new Date().toISOString(),
    });
    await this.writer(ProbeMeasurementRecorder).record(playerId, measurement, new Date());
    if (options.recordedAt) {
      await this.ds.query(`UPDATE probe_measurements SET recorded_at = $2 WHERE id = $1`, [
        measurement.measurementId,
        options.recordedAt,
      ]);
    }
    return measurement.measurementId;
  }

  /** A completed idempotency key of the player's (an enqueue's), aged to `createdAt`. */
  async idempotencyKey(playerId: string, createdAt: Date): Promise<string> {
    const key = randomUUID();
    await this.writer(IdempotencyStore).execute(
      { playerId, key, route: 'POST queue/tickets', input: { mode: 'duel' } },
      () => Promise.resolve({ status: 201, body: {} }),
    );
    await this.ageIdempotencyKeys(playerId, [key], createdAt);
    return key;
  }

  /**
   * A request of the player's under `key` still running: IdempotencyStore has claimed the key in
   * its transaction and the request's work has not finished. `abandon()` fails the work, so the
   * transaction rolls back and the key is free again.
   */
  async runningRequest(
    playerId: string,
    key: string,
    route: string,
  ): Promise<{ abandon(): Promise<void> }> {
    let claimed!: () => void;
    let abandon!: () => void;
    const keyClaimed = new Promise<void>((resolve) => (claimed = resolve));
    const abandoned = new Promise<void>((resolve) => (abandon = resolve));
    const running = this.writer(IdempotencyStore)
      .execute({ playerId, key, route, input: {} }, async () => {
        claimed();
        await abandoned;
        throw new Error('request abandoned by the test');
      })
      .catch(() => undefined);
    const holding = await Promise.race([keyClaimed.then(() => true), running.then(() => false)]);
    if (!holding) throw new Error(`the request under key ${key} ended without holding it`);
    return {
      abandon: async () => {
        abandon();
        await running;
      },
    };
  }

  /**
   * `count` completed keys of one player's heartbeats (a batch at a time, as the heartbeat route
   * claims them), aged one second apart from `newestAt` back.
   */
  async idempotencyKeys(playerId: string, count: number, newestAt: Date): Promise<void> {
    const store = this.writer(IdempotencyStore);
    const keys = Array.from({ length: count }, (_, i) => `k-${i + 1}`);
    for (let start = 0; start < count; start += 1_000) {
      const batch = keys.slice(start, start + 1_000).map((key) => ({
        playerId,
        key,
        route: 'POST queue/tickets/:id/heartbeat',
        input: { key },
      }));
      const outcomes = await store.executeMany(batch, (_manager, claimed) =>
        Promise.resolve(claimed.map(() => ({ value: { status: 200, body: {} } }))),
      );
      const failed = outcomes.find((outcome) => 'error' in outcome);
      if (failed) throw new Error(`idempotency key not stored: ${String(failed.error)}`);
    }
    await this.ageIdempotencyKeys(playerId, keys, newestAt);
  }

  /** created_at (completed_at with it) of these keys: the i-th one i seconds before `newestAt`. */
  private async ageIdempotencyKeys(playerId: string, keys: string[], newestAt: Date) {
    await this.ds.query(
      `UPDATE idempotency_keys k
          SET created_at = $3::timestamptz - make_interval(secs => a.n - 1),
              completed_at = $3::timestamptz - make_interval(secs => a.n - 1)
         FROM unnest($2::text[]) WITH ORDINALITY AS a(key, n)
        WHERE k.player_id = $1 AND k.key = a.key`,
      [playerId, keys, newestAt],
    );
  }

  // -------------------------------------------------------------------------------------------
  // Tickets

  /** A searching ticket of the player's, enqueued at `at`, as the queue route creates one. */
  async searchingTicket(
    playerId: string,
    options: {
      mode?: string;
      rating?: number;
      predictedRtt?: Record<string, number>;
      at?: Date;
    } = {},
  ): Promise<StoredTicket> {
    const { ticket } = await runInTransaction(this.ds, (manager, unit) =>
      this.writer(TicketStore).create(
        unit,
        {
          id: randomUUID(),
          playerId,
          mode: options.mode ?? 'duel',
          rating: options.rating ?? 1500,
          predictedRtt: options.predictedRtt ?? { [DEFAULT_REGION]: 20 },
        },
        options.at ?? new Date(),
      ),
    );
    return ticket;
  }

  /** A ticket that searched for ten minutes and ended at `at`, cancelled by its player or expired. */
  async endedTicket(
    playerId: string,
    options: { at: Date; state?: 'CANCELLED' | 'EXPIRED' },
  ): Promise<string> {
    const created = await this.searchingTicket(playerId, { at: minus(options.at, 10 * MINUTE) });
    await runInTransaction(this.ds, (manager, unit) =>
      this.writer(TicketStore).transition(
        unit,
        created,
        options.state === 'EXPIRED'
          ? { to: 'EXPIRED', heartbeatTimeoutMs: MINUTE }
          : { to: 'CANCELLED', reason: 'PLAYER_CANCELLED' },
        options.at,
      ),
    );
    return created.id;
  }

  // -------------------------------------------------------------------------------------------
  // Matches

  /**
   * Commits a match of these searching tickets as the matcher's MatchCommitter does: in one
   * transaction the match is created (ALLOCATING, with its envelope) and every ticket moved to
   * MATCHED; the store re-projects the tickets once it commits.
   */
  async match(
    ticketIds: readonly string[],
    options: {
      mode?: string;
      region?: string;
      teamOf?: (index: number) => number;
      at?: Date;
    } = {},
  ): Promise<string> {
    const tickets = this.writer(TicketStore);
    const teamOf = options.teamOf ?? ((index: number) => index % 2);
    const now = options.at ?? new Date();
    return runInTransaction(this.ds, async (manager, unit) => {
      const rows: StoredTicket[] = [];
      for (const id of ticketIds) {
        const row = await tickets.load(manager, id, { forUpdate: true });
        if (!row || row.state !== 'SEARCHING') throw new Error(`ticket ${id} is not searching`);
        rows.push(row);
      }
      const change = await this.writer(MatchStore).create(
        unit,
        {
          mode: options.mode ?? rows[0]?.mode ?? 'duel',
          region: options.region ?? DEFAULT_REGION,
          participants: rows.map((row, index) => ({
            playerId: row.playerId,
            ticketId: row.id,
            team: teamOf(index),
            rating: row.rating,
          })),
        },
        now,
      );
      for (const row of rows) {
        await tickets.transition(unit, row, { to: 'MATCHED', matchId: change.match.id }, now);
      }
      return change.match.id;
    });
  }

  /** A duel of two new players' tickets, enqueued and matched at `at`; its id and ticket ids. */
  async duel(at = new Date()): Promise<FormedMatch> {
    const ticketIds: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      ticketIds.push((await this.searchingTicket(await this.player(), { at })).id);
    }
    return { matchId: await this.match(ticketIds, { at }), ticketIds };
  }

  /**
   * Moves a match forward to `to`, one transaction per step, its tickets with it (ASSIGNED,
   * CONNECTED, COMPLETED) through MatchStore and TicketStore, as ServerLifecycleService's
   * registration, initial-connect and result do; at IN_PROGRESS every participant's connect is
   * recorded. Store-level rather than through that service: each step is dated `at` (`ticketsAt`
   * for the tickets' steps when they are to differ), and PROCESS_READY alone can be reached.
   */
  async advanceMatch(
    matchId: string,
    to: ForwardMatchState,
    options: { at?: Date; ticketsAt?: Date } = {},
  ): Promise<void> {
    const matches = this.writer(MatchStore);
    const tickets = this.writer(TicketStore);
    const now = options.at ?? new Date();
    for (const state of FORWARD.slice(0, FORWARD.indexOf(to) + 1)) {
      await runInTransaction(this.ds, async (manager, unit) => {
        const current = await matches.load(manager, matchId, { forUpdate: true });
        if (!current) throw new Error(`no match ${matchId}`);
        const passed =
          FORWARD.indexOf(current.state as ForwardMatchState) >= FORWARD.indexOf(state);
        if (passed) return;
        await matches.advance(unit, current, [{ to: state }], now);
        if (state === 'IN_PROGRESS') {
          const connected = current.participants.map((p) => p.playerId);
          await matches.recordConnections(manager, matchId, { connected, noShows: [] }, now);
        }
        const step = TICKET_STEP[state];
        if (!step) return;
        for (const participant of current.participants) {
          const ticket = await tickets.load(manager, participant.ticketId, { forUpdate: true });
          if (!ticket) throw new Error(`no ticket ${participant.ticketId}`);
          await tickets.transition(unit, ticket, { to: step, matchId }, options.ticketsAt ?? now);
        }
      });
    }
  }

  /**
   * Cancels a live match through MatchLifecycle at `at`: the tickets of players not yet in the game
   * (MATCHED, ASSIGNED) search again, the others end with it.
   */
  async cancelMatch(matchId: string, at = new Date()): Promise<void> {
    await runInTransaction(this.ds, (manager, unit) =>
      this.writer(MatchLifecycle).cancel(unit, matchId, 'OPERATOR_CANCELLED', { now: at }),
    );
  }

  /**
   * The allocator's record of a server for the match (ALLOCATED, a fresh credential hash): what
   * AllocationService.allocate stores once the provider answered.
   */
  allocate(
    matchId: string,
    server: { serverId?: string; endpoint?: string; region?: string } = {},
  ): Promise<AllocationRecord> {
    return runInTransaction(this.ds, (manager) =>
      this.writer(AllocationStore).record(
        manager,
        matchId,
        'local',
        {
          serverId: server.serverId ?? `server-${randomUUID()}`,
          endpoint: server.endpoint ?? '127.0.0.1:7777',
          providerRef: {},
          region: server.region ?? DEFAULT_REGION,
        },
        randomBytes(32),
      ),
    );
  }

  /** Ends the match's lease (RELEASED or FAILED) at `at`, as the allocator's release does. */
  async releaseAllocation(
    matchId: string,
    options: { state: 'RELEASED' | 'FAILED'; at: Date },
  ): Promise<void> {
    const released = await runInTransaction(this.ds, (manager) =>
      this.writer(AllocationStore).release(manager, matchId, {
        state: options.state,
        now: options.at,
      }),
    );
    if (!released) throw new Error(`match ${matchId} has no live allocation to release`);
  }

  /**
   * Signs and publishes the match's roster over its allocated server, as the allocator does: a
   * join token per durable participant and the manifest over them, issued at `at` (a test key).
   * The signing mirrors AllocationService's private publish step (apps/allocator): the same
   * statement of RosterStore writes, only the key and the clock are the test's.
   */
  async publishRoster(matchId: string, at = new Date()): Promise<PublishOutcome> {
    const progress = await this.writer(AllocationStore).progress(this.ds.manager, matchId);
    const allocation = progress.allocation;
    if (!allocation) throw new Error(`match ${matchId} has no allocation`);
    const signer = (this.signer ??= new JoinTokenSigner(
      KeySet.fromKeys({ k1: randomBytes(32) }),
      'k1',
    ));
    const issuedAt = at.getTime();
    const expiresAt = issuedAt + 5 * MINUTE;
    const entries = canonicalRosterOrder(
      progress.durable.map(({ playerId }) => ({
        playerId,
        token: signer.sign({
          matchId,
          playerId,
          serverId: allocation.serverId,
          endpoint: allocation.endpoint,
          issuedAt,
          expiresAt,
        }),
      })),
    );
    const manifest = signer.signRoster({
      matchId,
      serverId: allocation.serverId,
      entries,
      issuedAt,
    });
    return this.writer(RosterStore).publish(this.ds.manager, {
      manifest,
      assignments: entries.map((entry) => ({
        matchId,
        playerId: entry.playerId,
        serverId: allocation.serverId,
        endpoint: allocation.endpoint,
        joinToken: entry.token,
        keyId: manifest.keyId,
        issuedAt: new Date(issuedAt),
        expiresAt: new Date(expiresAt),
      })),
    });
  }

  /**
   * A duel that ran its whole course and COMPLETED at `finishedAt`: allocated, roster published
   * (assignments with it), both players connected, its allocation then ended as `allocation`
   * says (ALLOCATED leaves it live: a server not given back yet). Its tickets complete at
   * `ticketsFinishedAt` (default `finishedAt`).
   */
  async finishedMatch(
    finishedAt: Date,
    options: { allocation?: 'ALLOCATED' | 'RELEASED' | 'FAILED'; ticketsFinishedAt?: Date } = {},
  ): Promise<FormedMatch> {
    const ticketsAt = options.ticketsFinishedAt ?? finishedAt;
    const start = minus(new Date(Math.min(finishedAt.getTime(), ticketsAt.getTime())), 30 * MINUTE);
    const duel = await this.duel(start);
    await this.allocate(duel.matchId);
    await this.publishRoster(duel.matchId, new Date(start.getTime() + 5 * MINUTE));
    await this.advanceMatch(duel.matchId, 'IN_PROGRESS', {
      at: new Date(start.getTime() + 10 * MINUTE),
    });
    await this.advanceMatch(duel.matchId, 'COMPLETED', { at: finishedAt, ticketsAt });
    const allocation = options.allocation ?? 'RELEASED';
    if (allocation !== 'ALLOCATED') {
      await this.releaseAllocation(duel.matchId, { state: allocation, at: finishedAt });
    }
    return duel;
  }

  // -------------------------------------------------------------------------------------------
  // Outbox

  /**
   * `count` pending outbox events (each a new ticket's creation, as TicketStore appends it)
   * through the OutboxWriter, created at `createdAt` (aged: the column defaults to now()).
   */
  async outboxEvents(count: number, createdAt = new Date()): Promise<string[]> {
    const envelopes = Array.from({ length: count }, () =>
      aggregateEnvelope('ticket.state_changed', randomUUID(), 1, createdAt),
    );
    return this.appendOutbox(envelopes, createdAt);
  }

  /**
   * One pending event through the OutboxWriter: revision `revision` (1 to 5) of a ticket's or a
   * match's way to COMPLETED, as its store appends it, created at `createdAt` (aged).
   */
  async outboxEvent(
    options: {
      event?: 'ticket.state_changed' | 'match.state_changed';
      aggregateId?: string;
      revision?: number;
      createdAt?: Date;
    } = {},
  ): Promise<string> {
    const createdAt = options.createdAt ?? new Date();
    const envelope = aggregateEnvelope(
      options.event ?? 'match.state_changed',
      options.aggregateId ?? randomUUID(),
      options.revision ?? 1,
      createdAt,
    );
    const [id] = await this.appendOutbox([envelope], createdAt);
    return id!;
  }

  private async appendOutbox(envelopes: OutboxEnvelope[], createdAt: Date): Promise<string[]> {
    const writer = this.writer(OutboxWriter);
    for (let start = 0; start < envelopes.length; start += 1_000) {
      const batch = envelopes.slice(start, start + 1_000);
      await runInTransaction(this.ds, (manager) => writer.append(manager, batch));
    }
    const rows = await this.ds.query<{ id: string }[]>(
      `UPDATE outbox o SET created_at = $4
         FROM unnest($1::text[], $2::uuid[], $3::bigint[]) AS e(aggregate_type, aggregate_id, revision)
        WHERE (o.aggregate_type, o.aggregate_id, o.revision) = (e.aggregate_type, e.aggregate_id, e.revision)
        RETURNING o.id`,
      [
        envelopes.map((e) => e.aggregateType),
        envelopes.map((e) => e.aggregateId),
        envelopes.map((e) => e.revision.toString()),
        createdAt,
      ],
    );
    return returnedRows<{ id: string }>(rows).map((row) => row.id);
  }

  /** Events delivered and acked as a dispatcher settles them, aged to `publishedAt`. */
  async publishedOutboxEvents(
    count: number,
    times: { publishedAt: Date; createdAt?: Date },
  ): Promise<string[]> {
    const ids = await this.outboxEvents(count, times.createdAt ?? times.publishedAt);
    await this.publishOutbox(ids, times.publishedAt);
    return ids;
  }

  /** Events dead-lettered as a dispatcher does it (see {@link deadLetterOutbox}), aged to `deadAt`. */
  async deadLetteredOutboxEvents(
    count: number,
    times: { deadAt: Date; createdAt: Date },
  ): Promise<string[]> {
    const ids = await this.outboxEvents(count, times.createdAt);
    await this.deadLetterOutbox(ids, { deadAt: times.deadAt });
    return ids;
  }

  /** Delivers and acks these rows as a dispatcher settles them; published_at aged to `publishedAt`. */
  async publishOutbox(ids: readonly string[], publishedAt?: Date): Promise<void> {
    await this.settle(ids, undefined);
    if (publishedAt) {
      await this.ds.query(`UPDATE outbox SET published_at = $2 WHERE id = ANY($1::bigint[])`, [
        ids,
        publishedAt,
      ]);
    }
  }

  /**
   * Fails every delivery of these rows, as a dispatcher settles a subscriber's error (`error`, or
   * `error(attempt)`), until they reach `attempts` (default 1) and are dead-lettered;
   * dead_lettered_at aged to `deadAt`.
   */
  async deadLetterOutbox(
    ids: readonly string[],
    options: {
      attempts?: number;
      error?: string | ((attempt: number) => string);
      deadAt?: Date;
    } = {},
  ): Promise<void> {
    const error = options.error ?? 'Error: subscriber down';
    await this.settle(ids, {
      error: typeof error === 'string' ? () => error : error,
      attempts: options.attempts ?? 1,
    });
    if (options.deadAt) {
      await this.ds.query(`UPDATE outbox SET dead_lettered_at = $2 WHERE id = ANY($1::bigint[])`, [
        ids,
        options.deadAt,
      ]);
    }
  }

  /**
   * Claims and settles these rows as a dispatcher does, round after round, until each is
   * published (`failure` undefined) or dead. Each round claims every due head under a new owner
   * that never heartbeats, so the other rows it claims on the way are free again for the next.
   */
  private async settle(
    ids: readonly string[],
    failure: { error: (attempt: number) => string; attempts: number } | undefined,
  ): Promise<void> {
    const repository = this.writer(OutboxRepository);
    const unsettled = new Set(ids);
    for (let round = 0; unsettled.size > 0; round += 1) {
      if (round > 1_000) throw new Error(`outbox rows never settled: ${[...unsettled].join(', ')}`);
      const token = randomUUID();
      const heads = await repository.claimHeads(
        10_000,
        { token, owner: randomUUID() },
        { leaseMs: 10 * MINUTE, ownerTimeoutMs: 10 * MINUTE },
      );
      const results: DeliveryResult[] = heads
        .filter((head) => unsettled.has(head.id))
        .map((head) =>
          failure
            ? {
                id: head.id,
                token,
                delivered: false,
                error: failure.error(head.attempts + 1),
                permanent: false,
                retryDelayMs: 0,
              }
            : { id: head.id, token, delivered: true },
        );
      if (results.length === 0) throw new Error('outbox rows not claimable');
      for (let start = 0; start < results.length; start += 1_000) {
        const settlement = await repository.settle(results.slice(start, start + 1_000), undefined, {
          maxAttempts: failure?.attempts ?? 1,
        });
        for (const id of settlement.published) unsettled.delete(id);
        for (const failed of settlement.failed)
          if (failed.deadLettered) unsettled.delete(failed.id);
      }
    }
  }
}

/**
 * The envelope of revision `revision` (1 to 5) of a ticket or a match on its way to COMPLETED,
 * computed by libs/domain as its store computes it: what that store would append.
 */
function aggregateEnvelope(
  event: 'ticket.state_changed' | 'match.state_changed',
  aggregateId: string,
  revision: number,
  at: Date,
): OutboxEnvelope {
  let events: readonly DomainEvent[];
  if (event === 'ticket.state_changed') {
    const matchId = randomUUID();
    let change = createTicket(
      { id: aggregateId, playerId: randomUUID(), mode: 'duel', rating: 1500 },
      at,
    );
    for (const to of (['MATCHED', 'ASSIGNED', 'CONNECTED', 'COMPLETED'] as const).slice(
      0,
      revision - 1,
    )) {
      change = transitionTicket(change.ticket, { to, matchId }, at);
    }
    events = change.events;
  } else {
    const participants = [0, 1].map((team) => ({
      playerId: randomUUID(),
      ticketId: randomUUID(),
      team,
    }));
    let change = createMatch(
      { id: aggregateId, mode: 'duel', region: DEFAULT_REGION, participants },
      at,
    );
    for (const to of FORWARD.slice(0, revision - 1)) {
      change = transitionMatch(change.match, { to }, at);
    }
    events = change.events;
  }
  const [envelope] = envelopesFor(events);
  if (!envelope || envelope.revision !== revision) throw new Error(`no revision ${revision}`);
  return envelope;
}
