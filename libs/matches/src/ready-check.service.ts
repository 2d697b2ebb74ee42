import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type {
  MatchCancelReason,
  MatchChange,
  MatchSnapshot,
  TicketCommand,
} from '@matchplane/domain';
import { runInTransaction, type UnitOfWork } from '@matchplane/persistence';
import type { NoShowPenaltyPolicy } from '@matchplane/players';
import type { StoredTicket } from '@matchplane/tickets';
import { MatchLifecycle, type MatchEnding } from './match-lifecycle.service';

export type ReadyCheckAnswer = 'ACCEPTED' | 'DECLINED';

export type ReadyCheckOutcome =
  /** No such match, or not one of this player's. */
  | { readonly kind: 'not_found' }
  /** The match is past its ready check (or never had one) and the player had not given this answer. */
  | { readonly kind: 'closed'; readonly matchState: MatchSnapshot['state'] }
  /** The player already gave the other answer: an answer is final. */
  | { readonly kind: 'answered_otherwise'; readonly answer: ReadyCheckAnswer }
  /** The answer is recorded (now, or by an earlier identical call): `matchState` is the match's after it. */
  | {
      readonly kind: 'recorded';
      readonly answer: ReadyCheckAnswer;
      readonly matchState: MatchSnapshot['state'];
    };

interface AnswerRow {
  player_id: string;
  accepted_at: Date | null;
  declined_at: Date | null;
}

/**
 * The ready check of a match created AWAITING_ACCEPTANCE: each participant's answer is kept on
 * its roster row, under the match's row lock. The last acceptance moves the match to ALLOCATING
 * (the allocation trigger's event, so no server is asked for before); a decline, or the deadline
 * (maintenance's acceptance_timeouts stage), CANCELS it: the players who accepted search again
 * with their enqueue time (MATCHED -> SEARCHING), the decliner's or non-answerers' tickets end and
 * those players get the no-show cooldown. A player who had not answered when another declined is
 * let go without penalty, and so is one who accepted but whose party mate did not (a party
 * searches whole).
 */
@Injectable()
export class ReadyCheck {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
  ) {}

  /** Opens the ready check of a match just created AWAITING_ACCEPTANCE: its deadline. */
  async open(manager: EntityManager, matchId: string, deadline: Date): Promise<void> {
    await manager.query(`UPDATE matches SET acceptance_deadline = $2 WHERE id = $1`, [
      matchId,
      deadline,
    ]);
  }

  /** Records `playerId`'s answer, idempotently, in one transaction with what it sets off. */
  answer(
    playerId: string,
    matchId: string,
    answer: ReadyCheckAnswer,
    policy: NoShowPenaltyPolicy,
    now = new Date(),
  ): Promise<ReadyCheckOutcome> {
    return runInTransaction(this.dataSource, async (manager, unit): Promise<ReadyCheckOutcome> => {
      const match = await this.lifecycle.matches.load(manager, matchId, { forUpdate: true });
      if (!match?.participants.some((p) => p.playerId === playerId)) return { kind: 'not_found' };
      const answers = await this.answers(manager, matchId);
      const mine = answers.get(playerId);
      const given: ReadyCheckAnswer | undefined = mine?.accepted_at
        ? 'ACCEPTED'
        : mine?.declined_at
          ? 'DECLINED'
          : undefined;
      if (given === answer) return { kind: 'recorded', answer, matchState: match.state };
      if (match.state !== 'AWAITING_ACCEPTANCE') return { kind: 'closed', matchState: match.state };
      if (given !== undefined) return { kind: 'answered_otherwise', answer: given };
      const column = answer === 'ACCEPTED' ? 'accepted_at' : 'declined_at';
      await manager.query(
        `UPDATE match_participants SET ${column} = $3 WHERE match_id = $1 AND player_id = $2`,
        [matchId, playerId, now],
      );
      const at = { expectedRevision: match.revision, now };
      if (answer === 'DECLINED') {
        const accepted = acceptedPlayers(answers);
        const ending = await this.end(unit, match, 'ACCEPTANCE_DECLINED', accepted, at, (t) =>
          t.playerId === playerId
            ? { to: 'CANCELLED', reason: 'ACCEPTANCE_DECLINED', matchId }
            : { to: 'CANCELLED', reason: 'MATCH_CANCELLED', matchId },
        );
        await this.lifecycle.players.penaliseNoShow(unit, playerId, now, policy);
        return { kind: 'recorded', answer, matchState: ending.change.match.state };
      }
      const accepted = new Set([...acceptedPlayers(answers), playerId]);
      if (match.participants.every((p) => accepted.has(p.playerId))) {
        const change: MatchChange = await this.lifecycle.matches.transition(
          unit,
          matchId,
          { to: 'ALLOCATING' },
          at,
        );
        return { kind: 'recorded', answer, matchState: change.match.state };
      }
      return { kind: 'recorded', answer, matchState: match.state };
    });
  }

  /**
   * Cancels a match whose ready check ran out (ACCEPTANCE_TIMEOUT), in `unit`'s transaction at
   * the claimed revision: whoever had not accepted is penalised, the others search again.
   */
  async expire(
    unit: UnitOfWork,
    match: MatchSnapshot,
    policy: NoShowPenaltyPolicy,
    now: Date,
  ): Promise<MatchEnding> {
    const accepted = acceptedPlayers(await this.answers(unit.manager, match.id));
    const at = { expectedRevision: match.revision, now };
    const ending = await this.end(unit, match, 'ACCEPTANCE_TIMEOUT', accepted, at, () => ({
      to: 'FAILED',
      reason: 'ACCEPTANCE_TIMEOUT',
      matchId: match.id,
    }));
    for (const participant of match.participants) {
      if (!accepted.has(participant.playerId))
        await this.lifecycle.players.penaliseNoShow(unit, participant.playerId, now, policy);
    }
    return ending;
  }

  /** The match CANCELLED `reason`; accepted players' tickets requeued, the others' by `notAccepted`. */
  private async end(
    unit: UnitOfWork,
    match: MatchSnapshot,
    reason: MatchCancelReason,
    accepted: ReadonlySet<string>,
    at: { expectedRevision: number; now: Date },
    notAccepted: (ticket: StoredTicket) => TicketCommand,
  ): Promise<MatchEnding> {
    const change = await this.lifecycle.matches.transition(
      unit,
      match.id,
      { to: 'CANCELLED', reason },
      at,
    );
    // A party searches whole or not at all: one whose member did not accept is let go whole.
    const unreadyParties = new Set<string>();
    for (const participant of match.participants) {
      if (accepted.has(participant.playerId)) continue;
      const ticket = await this.lifecycle.tickets.load(unit.manager, participant.ticketId);
      if (ticket?.party) unreadyParties.add(ticket.party.id);
    }
    // A requeue keeps the ticket's enqueue time: those who accepted are served ahead.
    const tickets = await this.lifecycle.moveTickets(unit, change, at.now, (matchId, ticket) => {
      if (!accepted.has(ticket.playerId)) return notAccepted(ticket);
      return ticket.party && unreadyParties.has(ticket.party.id)
        ? { to: 'CANCELLED', reason: 'MATCH_CANCELLED', matchId }
        : { to: 'SEARCHING', matchCancelled: { matchId } };
    });
    return { change, tickets };
  }

  private async answers(manager: EntityManager, matchId: string): Promise<Map<string, AnswerRow>> {
    const rows = await manager.query<AnswerRow[]>(
      `SELECT player_id, accepted_at, declined_at FROM match_participants WHERE match_id = $1`,
      [matchId],
    );
    return new Map(rows.map((row) => [row.player_id, row]));
  }
}

function acceptedPlayers(answers: ReadonlyMap<string, AnswerRow>): Set<string> {
  return new Set([...answers.values()].filter((row) => row.accepted_at).map((r) => r.player_id));
}
