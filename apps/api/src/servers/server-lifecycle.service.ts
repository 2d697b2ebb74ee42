import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  AllocationStore,
  ReportedResults,
  RosterStore,
  type AllocationRecord,
} from '@matchplane/allocation';
import { ApiConfig } from '../api.config';
import {
  ErrorCode,
  SERVER_PROTOCOL_VERSION,
  type InitialConnectResponse,
  type MatchResultResponse,
  type RegisterServerResponse,
  type RosterResponse,
} from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { manifestRevision, type SignedRosterManifest } from '@matchplane/join-auth';
import {
  isTerminalMatchState,
  endedMatchConflict,
  type MatchSnapshot,
  type TicketCommand,
} from '@matchplane/domain';
import { MatchLifecycle, MatchPresenceService, MatchStore } from '@matchplane/matches';
import {
  runInTransaction,
  TransactionRetriesExhaustedError,
  type TransactionOptions,
} from '@matchplane/persistence';
import { noShowPenaltyPolicy, PlayerRatings, type NoShowPenaltyPolicy } from '@matchplane/players';
import { CandidateProjection, TicketStore, type StoredTicket } from '@matchplane/tickets';
import { refuseEndedAllocation } from './server-credential.guard';
import { ServerRouteMetrics, type ServerRoute } from './server-route.metrics';
import type { InitialConnectBody, MatchResultBody, RegisterServerBody } from './servers.dto';

/** What one route's transaction answers, and the tickets it moved (projected after commit). */
interface Committed<T> {
  readonly response: T;
  readonly tickets: readonly StoredTicket[];
}

// Registrations of many matches at once conflict under SSI now and then (page-level predicate
// locks); a generous budget keeps that a retry, and exhausting it is a 503 the server retries.
const SERIALIZABLE: TransactionOptions = {
  isolation: 'SERIALIZABLE',
  maxAttempts: 20,
  baseDelayMs: 5,
};

// Register is the burst path (every new match, at once): READ COMMITTED under row locks keeps
// its gate (docs/architecture/allocation-and-joining.md) without SSI's false conflicts
// between unrelated matches. A deadlock (40P01) is still retried.
const REGISTER: TransactionOptions = { maxAttempts: 5, baseDelayMs: 5 };

function stateConflict(match: MatchSnapshot, what: string): CodedError {
  return new CodedError(
    ErrorCode.MATCH_STATE_CONFLICT,
    `Match ${match.id} is ${match.state}: ${what}`,
  );
}

/**
 * The game server's side of a match. Each route is one transaction (SERIALIZABLE, retried on
 * 40001; register READ COMMITTED under row locks) that re-reads the match, answers its current state when the step already happened (so a
 * server may safely repeat any call), and otherwise moves the match and its tickets through the
 * stores with their outbox envelopes; the relay is woken after commit.
 */
@Injectable()
export class ServerLifecycleService {
  private readonly penalty: NoShowPenaltyPolicy;

  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly presence: MatchPresenceService,
    private readonly tickets: TicketStore,
    private readonly allocations: AllocationStore,
    private readonly rosters: RosterStore,
    private readonly results: ReportedResults,
    private readonly projection: CandidateProjection,
    private readonly ratings: PlayerRatings,
    private readonly metrics: ServerRouteMetrics,
    @Inject(ApiConfig) private readonly config: ApiConfig,
  ) {
    this.penalty = noShowPenaltyPolicy(config);
  }

  /**
   * ALLOCATING -> PROCESS_READY -> ASSIGNMENT_READY and every ticket MATCHED -> ASSIGNED, only
   * when every participant holds a live, unexpired assignment to this server. One READ COMMITTED
   * transaction under the match's and its tickets' row locks (the others are SERIALIZABLE).
   */
  async register(
    allocation: AllocationRecord,
    body: RegisterServerBody,
  ): Promise<RegisterServerResponse> {
    if (body.protocolVersion !== SERVER_PROTOCOL_VERSION) {
      throw new CodedError(
        ErrorCode.SERVER_PROTOCOL_UNSUPPORTED,
        `Protocol version ${body.protocolVersion} is not supported; this control plane speaks ${SERVER_PROTOCOL_VERSION}`,
      );
    }
    return this.commit(
      'register',
      async (manager, now) => {
        // The match row, then its tickets in id order: the locks every writer of either takes
        // (or waits on) first, so nothing the gate reads below can change before commit.
        const match = await this.loadMatch(manager, allocation, { forUpdate: true });
        const answer = (m: MatchSnapshot) => ({
          matchId: m.id,
          serverId: allocation.serverId,
          state: m.state,
          revision: m.revision,
        });
        if (match.state !== 'ALLOCATING' && match.state !== 'PROCESS_READY') {
          return { response: answer(match), tickets: [] };
        }
        const tickets = await this.tickets.lockMany(
          manager,
          match.participants.map((p) => p.ticketId),
        );
        const roster = await this.rosters.liveRoster(manager, match.id, allocation.serverId, now);
        if (!roster.ok || roster.entries.length !== match.participants.length) {
          throw new CodedError(
            ErrorCode.ASSIGNMENTS_NOT_READY,
            `Not every participant of match ${match.id} holds a live assignment to this server${roster.ok ? '' : `: ${roster.problem}`}`,
            { retryAfterSeconds: 1 },
          );
        }
        const changes = await this.matches.advance(
          manager,
          match,
          match.state === 'ALLOCATING'
            ? [
                // The region the allocator actually used goes on the match and its events.
                {
                  to: 'PROCESS_READY',
                  ...(allocation.region === undefined ? {} : { serverRegion: allocation.region }),
                },
                { to: 'ASSIGNMENT_READY' },
              ]
            : [{ to: 'ASSIGNMENT_READY' }],
          now,
        );
        const current = changes.at(-1)?.match ?? match;
        const { tickets: moved } = await this.tickets.transitionMany(
          manager,
          tickets.filter((ticket) => ticket.matchId === match.id && ticket.state === 'MATCHED'),
          () => ({ to: 'ASSIGNED', matchId: match.id }),
          now,
        );
        await this.allocations.markRegistered(manager, current.id, {
          protocolVersion: body.protocolVersion,
          imageDigest: body.imageDigest,
          now,
        });
        return { response: answer(current), tickets: moved };
      },
      REGISTER,
    );
  }

  /**
   * The published roster and its manifest. Until initial connect it is served only while it is
   * exactly the durable participants, each with a live assignment (the check the allocator signed
   * against); from IN_PROGRESS on it is served as signed (the server already reported who came).
   */
  async roster(allocation: AllocationRecord): Promise<RosterResponse> {
    return runInTransaction(
      this.dataSource,
      async (manager) => {
        const now = new Date();
        const match = await this.loadMatch(manager, allocation);
        if (isTerminalMatchState(match.state)) throw stateConflict(match, 'its roster is closed');
        const roster = await this.rosters.liveRoster(manager, match.id, allocation.serverId, now);
        let entries: RosterResponse['entries'] | undefined;
        let manifest: SignedRosterManifest | undefined;
        if (roster.ok) {
          entries = roster.entries.map((e) => ({
            playerId: e.playerId,
            team: e.team,
            joinToken: e.joinToken,
            expiresAt: e.expiresAt.toISOString(),
          }));
          manifest = roster.manifest;
        } else if (match.state === 'IN_PROGRESS') {
          const signed = await this.rosters.signedRoster(manager, match.id);
          manifest = signed?.manifest;
          const teams = new Map(match.participants.map((p) => [p.playerId, p.team]));
          entries = signed?.assignments.map((a) => ({
            playerId: a.playerId,
            team: teams.get(a.playerId) ?? 0,
            joinToken: a.joinToken,
            expiresAt: a.expiresAt.toISOString(),
          }));
        }
        if (!manifest || !entries) {
          throw new CodedError(
            ErrorCode.ASSIGNMENTS_NOT_READY,
            `The roster of match ${match.id} cannot be served: ${roster.ok ? 'not published' : roster.problem}`,
            { retryAfterSeconds: 1 },
          );
        }
        return {
          matchId: match.id,
          serverId: allocation.serverId,
          endpoint: allocation.endpoint,
          mode: match.mode,
          region: match.region,
          revision: manifestRevision(manifest),
          entries,
          manifest: { ...manifest, revision: manifestRevision(manifest) },
        };
      },
      { isolation: 'REPEATABLE READ' },
    );
  }

  /**
   * Who connected before the deadline. Every no-show's ticket fails (NO_SHOW) and the player is
   * penalised. The match goes on (IN_PROGRESS, connected tickets CONNECTED) while every team keeps
   * MATCH_MIN_CONNECTED_PER_TEAM connected players; otherwise it fails with NO_SHOW and the
   * connected players' tickets end with it (MATCH_FAILED, no penalty; they queue again themselves:
   * the domain requeues only failures before ASSIGNMENT_READY that no player caused).
   */
  async initialConnect(
    allocation: AllocationRecord,
    body: InitialConnectBody,
  ): Promise<InitialConnectResponse> {
    return this.commit('initial-connect', async (manager, now) => {
      const match = await this.loadMatch(manager, allocation);
      const participants = new Set(match.participants.map((p) => p.playerId));
      const unknown = body.connectedPlayerIds.filter((id) => !participants.has(id));
      if (unknown.length > 0) {
        throw new CodedError(
          ErrorCode.UNKNOWN_PARTICIPANT,
          `Not participants of match ${match.id}: ${unknown.join(', ')}`,
        );
      }
      const connected = new Set(body.connectedPlayerIds);
      const noShows = match.participants.filter((p) => !connected.has(p.playerId));
      const answer = (m: MatchSnapshot) => ({
        matchId: m.id,
        state: m.state,
        revision: m.revision,
        noShowPlayerIds: noShows.map((p) => p.playerId),
      });
      if (match.state === 'IN_PROGRESS' || isTerminalMatchState(match.state)) {
        return { response: answer(match), tickets: [] };
      }
      if (match.state !== 'ASSIGNMENT_READY')
        throw stateConflict(match, 'the server has not registered');

      await this.matches.recordConnections(
        manager,
        match.id,
        { connected: body.connectedPlayerIds, noShows: [] },
        now,
      );
      const moved = await this.lifecycle.penaliseNoShows(
        manager,
        match,
        noShows,
        now,
        this.penalty,
      );
      const teams = new Set(match.participants.map((p) => p.team));
      const goesOn = [...teams].every(
        (team) =>
          match.participants.filter((p) => p.team === team && connected.has(p.playerId)).length >=
          Math.min(
            this.config.MATCH_MIN_CONNECTED_PER_TEAM,
            match.participants.filter((p) => p.team === team).length,
          ),
      );
      if (!goesOn) {
        const ending = await this.lifecycle.fail(manager, match.id, 'NO_SHOW', {
          expectedRevision: match.revision,
          now,
        });
        await this.allocations.release(manager, match.id, { state: 'RELEASED', now });
        return { response: answer(ending.change.match), tickets: moved };
      }
      const change = await this.matches.transition(
        manager,
        match.id,
        { to: 'IN_PROGRESS' },
        { expectedRevision: match.revision, now },
      );
      moved.push(
        ...(await this.moveTickets(manager, change.match, now, (ticket) =>
          ticket.state === 'ASSIGNED' && connected.has(ticket.playerId)
            ? { to: 'CONNECTED', matchId: match.id }
            : undefined,
        )),
      );
      return { response: answer(change.match), tickets: moved };
    });
  }

  /**
   * The end of the match: COMPLETED (from IN_PROGRESS, connected tickets COMPLETED, connected
   * players rated) or FAILED SERVER_REPORTED_FAILURE (from any live state). The allocation is
   * released with the reported result: a static server's lease is free again, and local and
   * Agones servers exit by themselves.
   */
  async result(allocation: AllocationRecord, body: MatchResultBody): Promise<MatchResultResponse> {
    return this.commit('result', async (manager, now) => {
      const match = await this.loadMatch(manager, allocation);
      if (!isTerminalMatchState(match.state)) refuseEndedAllocation(allocation);
      this.checkResult(match, body);
      const answer = (m: MatchSnapshot) => ({
        matchId: m.id,
        state: m.state,
        revision: m.revision,
      });
      const report = {
        outcome: body.outcome,
        ...(body.winningTeam === undefined ? {} : { winningTeam: body.winningTeam }),
        ...(body.scores === undefined ? {} : { scores: body.scores }),
        reportedAt: now.toISOString(),
      };
      if (isTerminalMatchState(match.state)) {
        // Only an identical repeat replays (a report that lost a race to a different one is a 409).
        const recorded = (await this.results.of(manager, [match.id])).get(match.id);
        const conflict = endedMatchConflict(match, recorded, report);
        if (conflict)
          throw new CodedError(ErrorCode.RESULT_CONFLICT, `Match ${match.id}: ${conflict}`);
        await this.allocations.release(manager, match.id, {
          state: 'RELEASED',
          now,
          result: report,
        });
        return { response: answer(match), tickets: [] };
      }
      if (body.outcome === 'FAILED') {
        const ending = await this.lifecycle.fail(manager, match.id, 'SERVER_REPORTED_FAILURE', {
          expectedRevision: match.revision,
          now,
        });
        await this.allocations.release(manager, match.id, {
          state: 'RELEASED',
          now,
          result: report,
        });
        return { response: answer(ending.change.match), tickets: [] };
      }
      if (match.state !== 'IN_PROGRESS')
        throw stateConflict(match, 'only a match in progress can complete');
      const change = await this.matches.transition(
        manager,
        match.id,
        { to: 'COMPLETED' },
        { expectedRevision: match.revision, now },
      );
      const moved = await this.moveTickets(manager, change.match, now, (ticket) =>
        ticket.state === 'CONNECTED' ? { to: 'COMPLETED', matchId: match.id } : undefined,
      );
      // A backfill under way ends with the match: players it added who had not got in requeue.
      moved.push(...(await this.lifecycle.endBackfills(manager, match.id, now)));
      // Ratings move with the COMPLETED they result from (rule: libs/domain rateMatch; abandoners lose).
      await this.ratings.rateMatchResult(
        manager,
        match.id,
        await this.presence.finishedParticipants(manager, match),
        body,
        now,
      );
      await this.allocations.release(manager, match.id, { state: 'RELEASED', now, result: report });
      return { response: answer(change.match), tickets: moved };
    });
  }

  private checkResult(match: MatchSnapshot, body: MatchResultBody): void {
    const teams = new Set(match.participants.map((p) => p.team));
    if (
      body.winningTeam !== undefined &&
      (body.outcome !== 'COMPLETED' || !teams.has(body.winningTeam))
    ) {
      throw new CodedError(
        ErrorCode.VALIDATION_FAILED,
        `winningTeam must be a team of match ${match.id} on a COMPLETED result`,
      );
    }
    const participants = new Set(match.participants.map((p) => p.playerId));
    for (const [playerId, score] of Object.entries(body.scores ?? {})) {
      if (!participants.has(playerId)) {
        throw new CodedError(
          ErrorCode.UNKNOWN_PARTICIPANT,
          `scores names ${playerId}, not a participant of match ${match.id}`,
        );
      }
      if (typeof score !== 'number' || !Number.isFinite(score)) {
        throw new CodedError(
          ErrorCode.VALIDATION_FAILED,
          `scores.${playerId} must be a finite number`,
        );
      }
    }
  }

  private async loadMatch(
    manager: EntityManager,
    allocation: AllocationRecord,
    options: { forUpdate?: boolean } = {},
  ): Promise<MatchSnapshot> {
    const match = await this.matches.load(manager, allocation.matchId, options);
    if (!match)
      throw new CodedError(ErrorCode.NOT_FOUND, `Match ${allocation.matchId} no longer exists`);
    return match;
  }

  /** Each participant's ticket moved by `command` (undefined: left as it is). */
  private async moveTickets(
    manager: EntityManager,
    match: MatchSnapshot,
    now: Date,
    command: (ticket: StoredTicket) => TicketCommand | undefined,
  ): Promise<StoredTicket[]> {
    const moved: StoredTicket[] = [];
    for (const participant of match.participants) {
      const ticket = await this.tickets.load(manager, participant.ticketId, { forUpdate: true });
      if (!ticket || ticket.matchId !== match.id) continue;
      const next = command(ticket);
      if (next) moved.push((await this.tickets.transition(manager, ticket, next, now)).ticket);
    }
    return moved;
  }

  /**
   * Runs one route's transaction as a unit of work: its stores wake the relay and the moved
   * tickets are projected once it commits.
   */
  private async commit<T>(
    route: ServerRoute,
    work: (manager: EntityManager, now: Date) => Promise<Committed<T>>,
    options: TransactionOptions = SERIALIZABLE,
  ): Promise<T> {
    let committed: Committed<T>;
    try {
      committed = await runInTransaction(
        this.dataSource,
        async (manager) => {
          const done = await work(manager, new Date());
          for (const ticket of done.tickets)
            await this.projection.refreshAfterCommit(manager, ticket);
          return done;
        },
        {
          ...options,
          onRetry: ({ sqlState }) => this.metrics.retried(route, sqlState),
        },
      );
    } catch (error) {
      if (error instanceof TransactionRetriesExhaustedError) {
        throw new CodedError(
          ErrorCode.CONTENDED,
          'Too many concurrent changes to this match right now; retry',
          {
            retryAfterSeconds: 1,
          },
        );
      }
      throw error;
    }
    return committed.response;
  }
}
