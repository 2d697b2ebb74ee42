import { Inject, Injectable } from '@nestjs/common';
import { ReportedResults, AllocationStore, type AllocationRecord } from '@matchplane/allocation';
import { ApiConfig } from '../api.config';
import {
  ErrorCode,
  type InitialConnectResponse,
  type MatchResultResponse,
} from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  isTerminalMatchState,
  endedMatchConflict,
  type MatchSnapshot,
  type TicketCommand,
} from '@matchplane/domain';
import { MatchLifecycle, MatchPresenceService, MatchStore } from '@matchplane/matches';
import type { UnitOfWork } from '@matchplane/persistence';
import { noShowPenaltyPolicy, PlayerRatings, type NoShowPenaltyPolicy } from '@matchplane/players';
import { TicketStore, type StoredTicket } from '@matchplane/tickets';
import { refuseEndedAllocation } from './server-credential.guard';
import { ServerRouteTransactions, stateConflict } from './server-route.transactions';
import type { InitialConnectBody, MatchResultBody } from './servers.dto';

/**
 * The game server's reports on a registered match: who connected, and the result. Each is one
 * SERIALIZABLE transaction (retried on 40001) that re-reads the match, answers its current state
 * when the step already happened (so a server may safely repeat any call), and otherwise moves the
 * match and its tickets through the stores with their outbox envelopes; the stores register the
 * relay's wake-up and the tickets' projection for after the commit. (Register and the roster:
 * ServerRegistrationService.)
 */
@Injectable()
export class ServerLifecycleService {
  private readonly penalty: NoShowPenaltyPolicy;

  constructor(
    private readonly routes: ServerRouteTransactions,
    private readonly matches: MatchStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly presence: MatchPresenceService,
    private readonly tickets: TicketStore,
    private readonly allocations: AllocationStore,
    private readonly results: ReportedResults,
    private readonly ratings: PlayerRatings,
    @Inject(ApiConfig) private readonly config: ApiConfig,
  ) {
    this.penalty = noShowPenaltyPolicy(config);
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
    return this.routes.commit('initial-connect', async (manager, now, unit) => {
      const match = await this.routes.loadMatch(manager, allocation);
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
        return answer(match);
      }
      if (match.state !== 'ASSIGNMENT_READY')
        throw stateConflict(match, 'the server has not registered');

      await this.matches.recordConnections(
        manager,
        match.id,
        { connected: body.connectedPlayerIds, noShows: [] },
        now,
      );
      await this.lifecycle.penaliseNoShows(unit, match, noShows, now, this.penalty);
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
        const ending = await this.lifecycle.fail(unit, match.id, 'NO_SHOW', {
          expectedRevision: match.revision,
          now,
        });
        await this.allocations.release(manager, match.id, { state: 'RELEASED', now });
        return answer(ending.change.match);
      }
      const change = await this.matches.transition(
        unit,
        match.id,
        { to: 'IN_PROGRESS' },
        { expectedRevision: match.revision, now },
      );
      await this.moveTickets(unit, change.match, now, (ticket) =>
        ticket.state === 'ASSIGNED' && connected.has(ticket.playerId)
          ? { to: 'CONNECTED', matchId: match.id }
          : undefined,
      );
      return answer(change.match);
    });
  }

  /**
   * The end of the match: COMPLETED (from IN_PROGRESS, connected tickets COMPLETED, connected
   * players rated) or FAILED SERVER_REPORTED_FAILURE (from any live state). The allocation is
   * released with the reported result: a static server's lease is free again, and local and
   * Agones servers exit by themselves.
   */
  async result(allocation: AllocationRecord, body: MatchResultBody): Promise<MatchResultResponse> {
    return this.routes.commit('result', async (manager, now, unit) => {
      const match = await this.routes.loadMatch(manager, allocation);
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
        return answer(match);
      }
      if (body.outcome === 'FAILED') {
        const ending = await this.lifecycle.fail(unit, match.id, 'SERVER_REPORTED_FAILURE', {
          expectedRevision: match.revision,
          now,
        });
        await this.allocations.release(manager, match.id, {
          state: 'RELEASED',
          now,
          result: report,
        });
        return answer(ending.change.match);
      }
      if (match.state !== 'IN_PROGRESS')
        throw stateConflict(match, 'only a match in progress can complete');
      const change = await this.matches.transition(
        unit,
        match.id,
        { to: 'COMPLETED' },
        { expectedRevision: match.revision, now },
      );
      await this.moveTickets(unit, change.match, now, (ticket) =>
        ticket.state === 'CONNECTED' ? { to: 'COMPLETED', matchId: match.id } : undefined,
      );
      // A backfill under way ends with the match: players it added who had not got in requeue.
      await this.lifecycle.endBackfills(unit, match.id, now);
      // Ratings move with the COMPLETED they result from (rule: libs/domain rateMatch; abandoners
      // lose), unless the match is unrated (an unranked lobby's).
      if (await this.matches.isRated(manager, match.id)) {
        await this.ratings.rateMatchResult(
          unit,
          match.id,
          await this.presence.finishedParticipants(manager, match),
          body,
          now,
        );
      }
      await this.allocations.release(manager, match.id, { state: 'RELEASED', now, result: report });
      return answer(change.match);
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

  /** Each participant's ticket moved by `command` (undefined: left as it is). */
  private async moveTickets(
    unit: UnitOfWork,
    match: MatchSnapshot,
    now: Date,
    command: (ticket: StoredTicket) => TicketCommand | undefined,
  ): Promise<StoredTicket[]> {
    const moved: StoredTicket[] = [];
    for (const participant of match.participants) {
      const ticket = await this.tickets.load(unit.manager, participant.ticketId, {
        forUpdate: true,
      });
      if (!ticket || ticket.matchId !== match.id) continue;
      const next = command(ticket);
      if (next) moved.push((await this.tickets.transition(unit, ticket, next, now)).ticket);
    }
    return moved;
  }
}
