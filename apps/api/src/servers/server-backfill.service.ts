import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AllocationRecord } from '@matchplane/allocation';
import {
  ErrorCode,
  type BackfillConnectResponse,
  type BackfillResponse,
} from '@matchplane/contracts';
import {
  isMatchedTicketState,
  openSlots,
  slotsOf,
  setAttributeOf,
  withCommonSets,
  type MatchSnapshot,
  type RoleRule,
} from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import {
  BackfillStore,
  MatchLifecycle,
  MatchStore,
  type BackfillRecord,
} from '@matchplane/matches';
import { runInTransaction, type UnitOfWork } from '@matchplane/persistence';
import { noShowPenaltyPolicy, type NoShowPenaltyPolicy } from '@matchplane/players';
import { ActiveRuleSet } from '@matchplane/rule-sets';
import { TicketStore } from '@matchplane/tickets';
import { ApiConfig } from '../api.config';
import type { BackfillAcceptBody, BackfillConnectBody, BackfillRequestBody } from './servers.dto';

/** Without `timeoutSeconds`, how long the matcher may search. */
export const DEFAULT_BACKFILL_TIMEOUT_SECONDS = 30;

export function toBackfillResponse(request: BackfillRecord): BackfillResponse {
  return {
    requestId: request.id,
    matchId: request.matchId,
    team: request.team,
    slots: request.slots,
    state: request.state,
    ...(request.reason === undefined ? {} : { reason: request.reason }),
    expiresAt: request.expiresAt.toISOString(),
    playerIds: [...request.playerIds],
    ...(request.rosterRevision === undefined ? {} : { rosterRevision: request.rosterRevision }),
    revision: request.revision,
  };
}

/**
 * The game server's backfill routes (issue 14). Each is one READ COMMITTED transaction that
 * locks the match row, then the request, then tickets (the order the matcher's fill and every
 * match writer take), answers the current state when the step already happened (a server may
 * repeat any call), and otherwise moves the request, the tickets and the match through their
 * stores with their events.
 */
@Injectable()
export class ServerBackfillService {
  private readonly penalty: NoShowPenaltyPolicy;

  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly backfills: BackfillStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly tickets: TicketStore,
    // Team sizes and roles rules: the active rule set's (libs/rule-sets), read at each request.
    private readonly ruleSet: ActiveRuleSet,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.penalty = noShowPenaltyPolicy(config);
  }

  /**
   * Opens a request for `slots` places on `team` of the server's running match: 409 unless the
   * match is IN_PROGRESS, the team has that many open places (its size less the players still in
   * it) and no other live request. The same request again while the first is still OPEN answers
   * that one (`created: false`), so a server retrying after a lost answer keeps its request id.
   */
  async request(
    allocation: AllocationRecord,
    body: BackfillRequestBody,
  ): Promise<{ created: boolean; response: BackfillResponse }> {
    return this.inTransaction(async (manager, now, unit) => {
      const match = await this.lockMatch(manager, allocation);
      if (match.state !== 'IN_PROGRESS') {
        throw new CodedError(
          ErrorCode.MATCH_STATE_CONFLICT,
          `Match ${match.id} is ${match.state}: only a match in progress is backfilled`,
        );
      }
      const members = match.participants.filter((p) => p.team === body.team);
      if (members.length === 0) {
        throw new CodedError(
          ErrorCode.VALIDATION_FAILED,
          `team must be a team of match ${match.id} (${[...new Set(match.participants.map((p) => p.team))].join(', ')})`,
        );
      }
      const live = (await this.backfills.liveOfMatch(manager, match.id)).find(
        (request) => request.team === body.team,
      );
      // A repeat (a retry whose answer was lost) gets the request it made; anything else waits.
      if (live?.slots === body.slots && live.state === 'OPEN') {
        return { created: false, response: toBackfillResponse(live) };
      }
      if (live) {
        throw new CodedError(
          ErrorCode.BACKFILL_CONFLICT,
          `Team ${body.team} of match ${match.id} already has a backfill request under way (${live.id}, ${live.slots} places, ${live.state})`,
        );
      }
      // Every player's ticket: the team's for the places and rating, everyone's for the sets.
      const tickets = await this.tickets.loadMany(
        manager,
        match.participants.map((p) => p.ticketId),
      );
      const inMatch = [...tickets.values()].filter(
        (ticket) => ticket.matchId === match.id && isMatchedTicketState(ticket.state),
      );
      const teamTickets = new Set(members.map((p) => p.ticketId));
      const stillIn = inMatch.filter((ticket) => teamTickets.has(ticket.id));
      // Each team by its own size: team 1 of hunt:4+1 has one place, team 0 four.
      const shape = this.ruleSet.current().modes.find(({ mode }) => mode === match.mode);
      const teamSize = shape?.teamSizes[body.team] ?? members.length;
      const open = teamSize - stillIn.length;
      if (body.slots > open) {
        throw new CodedError(
          ErrorCode.BACKFILL_NO_OPEN_SLOTS,
          `Team ${body.team} of match ${match.id} has ${Math.max(0, open)} open places (${stillIn.length} of ${teamSize} players still in it), not ${body.slots}`,
        );
      }
      // A ticket's rating is the one its player was matched at (rating_at_match), so the team's
      // mean needs no read of its own; with nobody left in the team, its original players'.
      const rated =
        stillIn.length > 0
          ? stillIn
          : [...tickets.values()].filter((ticket) => teamTickets.has(ticket.id));
      const anchor = rated[0];
      const teamRating =
        rated.length > 0 ? rated.reduce((sum, t) => sum + t.rating, 0) / rated.length : undefined;
      const request = await this.backfills.open(
        unit,
        {
          matchId: match.id,
          mode: match.mode,
          team: body.team,
          slots: body.slots,
          serverRegion: match.serverRegion ?? allocation.region ?? match.region,
          teamRating: teamRating ?? anchor?.rating ?? 0,
          // A set attribute narrowed to what everyone still in shares (cross-play platforms).
          attributes: withCommonSets(
            anchor?.attributes ?? {},
            inMatch.map((ticket) => ticket.attributes),
          ),
          openRoles: this.openRoles(match.mode, stillIn),
          expiresAt: new Date(
            now.getTime() + (body.timeoutSeconds ?? DEFAULT_BACKFILL_TIMEOUT_SECONDS) * 1_000,
          ),
        },
        now,
      );
      return { created: true, response: toBackfillResponse(request) };
    });
  }

  /** The roles the team's players still in leave open under the mode's roles rule ([]: none). */
  private openRoles(mode: string, stillIn: readonly { attributes: unknown }[]): string[] {
    const rules = this.ruleSet.current().attributes.get(mode)?.rules ?? [];
    const rule = rules.find((candidate): candidate is RoleRule => candidate.kind === 'roles');
    if (!rule) return [];
    const players = stillIn.map(
      (ticket) => setAttributeOf(ticket.attributes, rule.attribute) ?? [],
    );
    return openSlots(players, slotsOf(rule));
  }

  async status(allocation: AllocationRecord, requestId: string): Promise<BackfillResponse> {
    const request = await this.backfills.load(this.dataSource.manager, requestId);
    return toBackfillResponse(this.ofThisMatch(allocation, requestId, request));
  }

  /**
   * Cancels a request not yet accepted (OPEN, MATCHED, PUBLISHED): the players it added who have
   * not got in go back to the queue with their priority. An ended request answers as it is; one
   * the server already accepted is a 409 (its players were told to connect).
   */
  async cancel(allocation: AllocationRecord, requestId: string): Promise<BackfillResponse> {
    return this.inTransaction(async (manager, now, unit) => {
      await this.lockMatch(manager, allocation);
      const request = await this.lockRequest(manager, allocation, requestId);
      if (request.state === 'ASSIGNED') {
        throw new CodedError(
          ErrorCode.BACKFILL_CONFLICT,
          `Backfill request ${request.id} was accepted: its players were told to connect; report who did`,
        );
      }
      if (
        request.state !== 'OPEN' &&
        request.state !== 'MATCHED' &&
        request.state !== 'PUBLISHED'
      ) {
        return toBackfillResponse(request);
      }
      const cancelled = await this.lifecycle.cancelBackfill(unit, request, 'SERVER_CANCELLED', now);
      return toBackfillResponse(cancelled.request);
    });
  }

  /**
   * The server fetched and verified roster revision `rosterRevision`, which carries the added
   * players: their tickets go ASSIGNED (they are told to connect) and the request ASSIGNED.
   */
  async accept(
    allocation: AllocationRecord,
    requestId: string,
    body: BackfillAcceptBody,
  ): Promise<BackfillResponse> {
    return this.inTransaction(async (manager, now, unit) => {
      const match = await this.lockMatch(manager, allocation);
      const request = await this.lockRequest(manager, allocation, requestId);
      const accepted = request.state === 'ASSIGNED' || request.state === 'FILLED';
      if (
        request.rosterRevision !== body.rosterRevision ||
        (!accepted && request.state !== 'PUBLISHED')
      ) {
        throw new CodedError(
          ErrorCode.BACKFILL_CONFLICT,
          `Backfill request ${request.id} is ${request.state}${request.rosterRevision === undefined ? '' : ` with roster revision ${request.rosterRevision}`}: roster revision ${body.rosterRevision} cannot be accepted`,
        );
      }
      if (accepted) return toBackfillResponse(request);
      const added = await this.lifecycle.lockAddedTickets(manager, request);
      await this.tickets.transitionMany(
        unit,
        added.filter((ticket) => ticket.state === 'MATCHED'),
        () => ({ to: 'ASSIGNED', matchId: match.id }),
        now,
      );
      const assigned = await this.backfills.transition(unit, request, { to: 'ASSIGNED' }, now);
      return toBackfillResponse(assigned);
    });
  }

  /**
   * Who of the added players connected: their tickets CONNECTED and their connection recorded;
   * the others are no-shows, penalised as at initial connect. The request is FILLED.
   */
  async connect(
    allocation: AllocationRecord,
    requestId: string,
    body: BackfillConnectBody,
  ): Promise<BackfillConnectResponse> {
    return this.inTransaction(async (manager, now, unit) => {
      const match = await this.lockMatch(manager, allocation);
      const request = await this.lockRequest(manager, allocation, requestId);
      const addedIds = new Set(request.playerIds);
      const unknown = body.connectedPlayerIds.filter((id) => !addedIds.has(id));
      if (unknown.length > 0) {
        throw new CodedError(
          ErrorCode.UNKNOWN_PARTICIPANT,
          `Not players of backfill request ${request.id}: ${unknown.join(', ')}`,
        );
      }
      const connected = new Set(body.connectedPlayerIds);
      const noShowPlayerIds = request.playerIds.filter((id) => !connected.has(id));
      if (request.state === 'FILLED') return { ...toBackfillResponse(request), noShowPlayerIds };
      if (request.state !== 'ASSIGNED') {
        throw new CodedError(
          ErrorCode.BACKFILL_CONFLICT,
          `Backfill request ${request.id} is ${request.state}: only an accepted request takes a connect report`,
        );
      }
      await this.matches.recordConnections(
        manager,
        match.id,
        { connected: body.connectedPlayerIds, noShows: [] },
        now,
      );
      const noShows = match.participants.filter((p) => noShowPlayerIds.includes(p.playerId));
      await this.lifecycle.penaliseNoShows(unit, match, noShows, now, this.penalty);
      const added = await this.lifecycle.lockAddedTickets(manager, request);
      await this.tickets.transitionMany(
        unit,
        added.filter((ticket) => ticket.state === 'ASSIGNED' && connected.has(ticket.playerId)),
        () => ({ to: 'CONNECTED', matchId: match.id }),
        now,
      );
      const filled = await this.backfills.transition(unit, request, { to: 'FILLED' }, now);
      return { ...toBackfillResponse(filled), noShowPlayerIds };
    });
  }

  private async lockMatch(
    manager: EntityManager,
    allocation: AllocationRecord,
  ): Promise<MatchSnapshot> {
    const match = await this.matches.load(manager, allocation.matchId, { forUpdate: true });
    if (!match)
      throw new CodedError(ErrorCode.NOT_FOUND, `Match ${allocation.matchId} no longer exists`);
    return match;
  }

  private async lockRequest(
    manager: EntityManager,
    allocation: AllocationRecord,
    requestId: string,
  ): Promise<BackfillRecord> {
    const request = await this.backfills.load(manager, requestId, { forUpdate: true });
    return this.ofThisMatch(allocation, requestId, request);
  }

  /** 404 for an unknown request and for another match's (one answer: ids cannot be probed). */
  private ofThisMatch(
    allocation: AllocationRecord,
    requestId: string,
    request: BackfillRecord | undefined,
  ): BackfillRecord {
    if (request?.matchId !== allocation.matchId) {
      throw new CodedError(
        ErrorCode.BACKFILL_NOT_FOUND,
        `Match ${allocation.matchId} has no backfill request ${requestId}`,
      );
    }
    return request;
  }

  private inTransaction<T>(
    work: (manager: EntityManager, now: Date, unit: UnitOfWork) => Promise<T>,
  ): Promise<T> {
    return runInTransaction(this.dataSource, (manager, unit) => work(manager, new Date(), unit), {
      maxAttempts: 5,
      baseDelayMs: 5,
    });
  }
}
