import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { isTerminalMatchState } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import { MatchLifecycle, MatchStore } from '@matchplane/matches';
import { AuditWriter, runInTransaction } from '@matchplane/persistence';
import { TicketStore, type StoredTicket } from '@matchplane/tickets';

export interface CancelledMatch {
  matchId: string;
  state: string;
  revision: number;
  /** Players not yet in the game, searching again with their place. */
  requeued: string[];
  /** Players let go from the game; their next ticket keeps its old enqueue time. */
  released: string[];
}

export interface ReleasedTickets {
  playerId: string;
  /** Every ticket ended: the player's, and its party mates' while they searched together. */
  tickets: { ticketId: string; playerId: string; from: string }[];
}

/**
 * An operator's hand on live play: cancel a match (CANCELLED OPERATOR_CANCELLED through
 * MatchLifecycle; its server is released by maintenance's finished-allocation stage as for any
 * ended match) and release a player's live ticket (a stuck player, or one being removed from
 * play). Each is one transaction with its events and its audit row.
 */
@Injectable()
export class MatchControlsAdmin {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly lifecycle: MatchLifecycle,
    private readonly tickets: TicketStore,
    private readonly audit: AuditWriter,
  ) {}

  async cancelMatch(matchId: string, operator: string, reason: string): Promise<CancelledMatch> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const match = await this.matches.load(manager, matchId, { forUpdate: true });
      if (!match) throw new CodedError(ErrorCode.NOT_FOUND, `No match ${matchId}`);
      if (isTerminalMatchState(match.state)) {
        throw new CodedError(
          ErrorCode.MATCH_STATE_CONFLICT,
          `Match ${matchId} already ended ${match.state}${match.failureReason ? ` (${match.failureReason})` : ''}`,
        );
      }
      const ending = await this.lifecycle.cancel(unit, matchId, 'OPERATOR_CANCELLED', {
        expectedRevision: match.revision,
      });
      const requeued = playersIn(ending.tickets, (t) => t.state === 'SEARCHING');
      const released = playersIn(ending.tickets, (t) => t.state !== 'SEARCHING');
      await this.audit.record(manager, {
        actor: operator,
        action: 'match.cancelled',
        targetType: 'match',
        targetId: matchId,
        reason,
        details: { from: match.state, requeued, released },
      });
      return {
        matchId,
        state: ending.change.match.state,
        revision: ending.change.match.revision,
        requeued,
        released,
      };
    });
  }

  async releaseTickets(
    playerId: string,
    operator: string,
    reason: string,
  ): Promise<ReleasedTickets> {
    return runInTransaction(this.dataSource, async (manager, unit) => {
      const live = await this.tickets.liveTicketOf(manager, playerId);
      if (!live) {
        throw new CodedError(ErrorCode.TICKET_NOT_FOUND, `Player ${playerId} holds no live ticket`);
      }
      const current = await this.tickets.load(manager, live.id, { forUpdate: true });
      if (!current || current.state !== live.state) {
        throw new CodedError(ErrorCode.CONFLICT, `Ticket ${live.id} changed meanwhile; try again`);
      }
      const released = { to: 'CANCELLED', reason: 'OPERATOR_RELEASED' } as const;
      // A searching party leaves the queue whole, as when a member cancels.
      const ended =
        current.state === 'SEARCHING'
          ? await this.tickets.endWithParty(
              unit,
              current,
              released,
              {
                to: 'CANCELLED',
                reason: 'PARTY_MEMBER_CANCELLED',
              },
              new Date(),
            )
          : [(await this.tickets.transition(unit, current, released, new Date())).ticket];
      const tickets = ended.map((ticket) => ({
        ticketId: ticket.id,
        playerId: ticket.playerId,
        from: ticket.id === current.id ? current.state : 'SEARCHING',
      }));
      await this.audit.record(manager, {
        actor: operator,
        action: 'player.tickets.released',
        targetType: 'player',
        targetId: playerId,
        reason,
        details: { tickets },
      });
      return { playerId, tickets };
    });
  }
}

function playersIn(
  tickets: readonly StoredTicket[],
  which: (ticket: StoredTicket) => boolean,
): string[] {
  return tickets
    .filter(which)
    .map((ticket) => ticket.playerId)
    .sort();
}
