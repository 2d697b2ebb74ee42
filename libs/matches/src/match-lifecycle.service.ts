import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  isTerminalTicketState,
  matchFailureAllowsRequeue,
  type MatchCancelReason,
  type MatchChange,
  type MatchFailureReason,
  type MatchParticipant,
  type BackfillReason,
  type MatchSnapshot,
  type TicketCommand,
} from '@matchplane/domain';
import { runInTransaction, type UnitOfWork } from '@matchplane/persistence';
import { PlayerStore, type NoShowPenaltyPolicy } from '@matchplane/players';
import { TicketStore, type StoredTicket } from '@matchplane/tickets';
import { MatchStore } from './match.store';
import { BackfillStore, type BackfillRecord } from './backfill.store';

export interface MatchEnding {
  readonly change: MatchChange;
  /** The participants' tickets after the ending (requeued ones are SEARCHING again). */
  readonly tickets: readonly StoredTicket[];
}

/**
 * How long the players of a match lost with its server (or cancelled under them) keep their
 * requeue priority: their next ticket within it keeps the lost one's enqueue time (served ahead
 * of tickets enqueued since).
 */
export const SERVER_LOSS_PRIORITY_MS = 10 * 60_000;

/**
 * Ends a match together with its tickets, in one transaction: the one place that decides what a
 * failure or cancellation means for the players. A failure before ASSIGNMENT_READY that no
 * player caused requeues every ticket with its original enqueue time (it keeps its priority);
 * so does a cancellation for the players not yet in the game; any other ending ends the tickets
 * (a server lost or a cancellation then grants the next ticket its old enqueue time). Every
 * change emits its event, so each participant is told.
 */
@Injectable()
export class MatchLifecycle {
  constructor(
    private readonly dataSource: DataSource,
    /** The store it moves matches through (reconciliation claims stuck ones with it). */
    readonly matches: MatchStore,
    /** The participants' tickets (the ready check reads their parties with it). */
    readonly tickets: TicketStore,
    /** The players' cooldowns and priorities (the ready check penalises with it too). */
    readonly players: PlayerStore,
    /** The backfill requests it ends with their match (reconciliation expires them with it). */
    readonly backfills: BackfillStore,
  ) {}

  /**
   * Cancels a live backfill request in `manager`'s transaction (the caller holds the match's row
   * lock): the request CANCELLED with `reason`, and the players it added who have not got in yet
   * (their ticket still MATCHED or ASSIGNED to this match) back to the queue with their priority.
   */
  async cancelBackfill(
    unit: UnitOfWork,
    request: BackfillRecord,
    reason: BackfillReason,
    now: Date,
  ): Promise<{ request: BackfillRecord; tickets: StoredTicket[] }> {
    const cancelled = await this.backfills.transition(
      unit,
      request,
      { to: 'CANCELLED', reason },
      now,
    );
    const waiting = (await this.lockAddedTickets(unit.manager, request)).filter(
      (ticket) => ticket.state === 'MATCHED' || ticket.state === 'ASSIGNED',
    );
    const { tickets: moved } = await this.tickets.transitionMany(
      unit,
      waiting,
      () => ({ to: 'SEARCHING', backfillCancelled: { matchId: request.matchId } }),
      now,
    );
    return { request: cancelled, tickets: moved };
  }

  /**
   * The tickets of the players `request` added that are still bound to its match, locked in id
   * order (as every writer of several tickets locks them).
   */
  async lockAddedTickets(manager: EntityManager, request: BackfillRecord): Promise<StoredTicket[]> {
    const ids = await this.matches.participantsAddedBy(manager, request.matchId, request.id);
    const locked = await this.tickets.lockMany(manager, ids);
    return locked.filter((ticket) => ticket.matchId === request.matchId);
  }

  /** Every live backfill request of a match that ended is cancelled (MATCH_ENDED). */
  async endBackfills(unit: UnitOfWork, matchId: string, now: Date): Promise<StoredTicket[]> {
    const moved: StoredTicket[] = [];
    for (const request of await this.backfills.liveOfMatch(unit.manager, matchId)) {
      moved.push(...(await this.cancelBackfill(unit, request, 'MATCH_ENDED', now)).tickets);
    }
    return moved;
  }

  /**
   * The no-show plan for the players who never joined `match`, in `manager`'s transaction: each
   * one's ticket (while still ASSIGNED to this match) FAILED NO_SHOW, the player's cooldown
   * extended (`policy`), and the roster marks them no-shows. Whoever applies it (a server's
   * initial-connect report, or reconciliation at the connect deadline) applies the same. A ticket
   * that already ended is not penalised again, so a repeated report changes nothing.
   */
  async penaliseNoShows(
    unit: UnitOfWork,
    match: MatchSnapshot,
    noShows: readonly MatchParticipant[],
    now: Date,
    policy: NoShowPenaltyPolicy,
  ): Promise<StoredTicket[]> {
    const moved: StoredTicket[] = [];
    for (const participant of noShows) {
      const ticket = await this.tickets.load(unit.manager, participant.ticketId, {
        forUpdate: true,
      });
      if (ticket?.state !== 'ASSIGNED' || ticket.matchId !== match.id) continue;
      const failed = { to: 'FAILED', reason: 'NO_SHOW', matchId: match.id } as const;
      const { ticket: penalised } = await this.tickets.transition(unit, ticket, failed, now);
      moved.push(penalised);
      await this.players.penaliseNoShow(unit, participant.playerId, now, policy);
    }
    await this.matches.recordConnections(
      unit.manager,
      match.id,
      { connected: [], noShows: noShows.map((p) => p.playerId) },
      now,
    );
    return moved;
  }

  /**
   * Fails a match nobody connected to (NO_SHOW): every participant is a no-show and penalised as
   * {@link penaliseNoShows} says, then the match ends.
   */
  async failNobodyConnected(
    unit: UnitOfWork,
    matchId: string,
    policy: NoShowPenaltyPolicy,
    options: { expectedRevision?: number; now?: Date } = {},
  ): Promise<MatchEnding> {
    const now = options.now ?? new Date();
    const match = await this.matches.load(unit.manager, matchId);
    const penalised = match
      ? await this.penaliseNoShows(unit, match, match.participants, now, policy)
      : [];
    const ending = await this.fail(unit, matchId, 'NO_SHOW', { ...options, now });
    return { change: ending.change, tickets: [...penalised, ...ending.tickets] };
  }

  async fail(
    unit: UnitOfWork,
    matchId: string,
    reason: MatchFailureReason,
    options: { expectedRevision?: number; now?: Date } = {},
  ): Promise<MatchEnding> {
    const now = options.now ?? new Date();
    const current = await this.matches.load(unit.manager, matchId);
    const change = await this.matches.transition(
      unit,
      matchId,
      { to: 'FAILED', reason },
      { ...options, now },
    );
    const requeue = current !== undefined && matchFailureAllowsRequeue(current.state, reason);
    const tickets = await this.moveTickets(unit, change, now, (ticketMatchId) =>
      requeue && current
        ? {
            to: 'SEARCHING',
            failedMatch: { matchId: ticketMatchId, failedFrom: current.state, reason },
          }
        : { to: 'FAILED', reason: 'MATCH_FAILED', matchId: ticketMatchId },
    );
    await this.endBackfills(unit, matchId, now);
    return { change, tickets };
  }

  /**
   * Fails a match whose game server went silent (SERVER_LOST): no player's doing, so the tickets
   * end without penalty (a loss before ASSIGNMENT_READY requeues them, keeping their time) and
   * the players whose ticket ended get requeue priority for their next enqueue.
   */
  async failServerLost(
    unit: UnitOfWork,
    matchId: string,
    options: { expectedRevision?: number; now?: Date } = {},
  ): Promise<MatchEnding> {
    const now = options.now ?? new Date();
    const ending = await this.fail(unit, matchId, 'SERVER_LOST', { ...options, now });
    await this.grantRequeuePriority(unit.manager, ending.tickets, now);
    return ending;
  }

  /** The players whose tickets ended through no fault of theirs queue next with their old time. */
  private async grantRequeuePriority(
    manager: EntityManager,
    tickets: readonly StoredTicket[],
    now: Date,
  ): Promise<void> {
    const ended = tickets.filter((ticket) => isTerminalTicketState(ticket.state));
    await this.players.grantRequeuePriority(
      manager,
      ended.map((ticket) => ({ playerId: ticket.playerId, queuedSince: ticket.enqueuedAt })),
      new Date(now.getTime() + SERVER_LOSS_PRIORITY_MS),
    );
  }

  async cancel(
    unit: UnitOfWork,
    matchId: string,
    reason: MatchCancelReason,
    options: { expectedRevision?: number; now?: Date } = {},
  ): Promise<MatchEnding> {
    const now = options.now ?? new Date();
    const change = await this.matches.transition(
      unit,
      matchId,
      { to: 'CANCELLED', reason },
      { ...options, now },
    );
    // Nobody's fault: a player not yet in the game searches again with its place; one in the game
    // is let go, and its next ticket keeps its old enqueue time.
    const tickets = await this.moveTickets(unit, change, now, (ticketMatchId, ticket) =>
      ticket.state === 'MATCHED' || ticket.state === 'ASSIGNED'
        ? { to: 'SEARCHING', matchCancelled: { matchId: ticketMatchId } }
        : { to: 'CANCELLED', reason: 'MATCH_CANCELLED', matchId: ticketMatchId },
    );
    await this.grantRequeuePriority(unit.manager, tickets, now);
    await this.endBackfills(unit, matchId, now);
    return { change, tickets };
  }

  /** {@link fail} in its own transaction, then the relay is woken and requeued candidates projected. */
  async failNow(matchId: string, reason: MatchFailureReason): Promise<MatchEnding> {
    return runInTransaction(this.dataSource, (manager, unit) => this.fail(unit, matchId, reason));
  }

  async cancelNow(matchId: string, reason: MatchCancelReason): Promise<MatchEnding> {
    return runInTransaction(this.dataSource, (manager, unit) => this.cancel(unit, matchId, reason));
  }

  /** Moves every participant ticket still bound to the match by `command`, each with its event. */
  async moveTickets(
    unit: UnitOfWork,
    change: MatchChange,
    now: Date,
    command: (matchId: string, ticket: StoredTicket) => TicketCommand,
  ): Promise<StoredTicket[]> {
    const moved: StoredTicket[] = [];
    for (const participant of change.match.participants) {
      const ticket = await this.tickets.load(unit.manager, participant.ticketId, {
        forUpdate: true,
      });
      // A ticket that already ended (its player cancelled) or moved to another match stays as it is.
      if (!ticket || isTerminalTicketState(ticket.state) || ticket.matchId !== change.match.id)
        continue;
      const { ticket: next } = await this.tickets.transition(
        unit,
        ticket,
        command(change.match.id, ticket),
        now,
      );
      moved.push(next);
    }
    return moved;
  }
}
