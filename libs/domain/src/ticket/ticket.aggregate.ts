import {
  matchFailureAllowsRequeue,
  type MatchFailureReason,
  type MatchState,
} from '../match/match-state.machine';
import type { TicketAttributes } from '../matching/attribute-rules';
import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { stateChangeEnvelope } from '../shared/domain.event';
import { FIRST_REVISION, nextRevision } from '../shared/revision';
import { assertNow, isLabel, isUuid, isValidDate } from '../shared/value.guards';
import { TICKET_STATE_CHANGED, type TicketStateChanged } from './ticket.events';
import {
  canTransitionTicket,
  isTicketState,
  ticketReasonsFor,
  type TicketReason,
  type TicketState,
} from './ticket-state.machine';

export interface TicketSnapshot {
  readonly id: string;
  readonly playerId: string;
  readonly mode: string;
  readonly state: TicketState;
  readonly revision: number;
  readonly rating: number;
  /** Predicted RTT in ms by region; an empty object before any probe, never null. */
  readonly predictedRtt: Readonly<Record<string, number>>;
  /** Kept across a requeue, so a ticket whose match failed keeps its place in the queue. */
  readonly enqueuedAt: Date;
  readonly lastHeartbeatAt: Date;
  /** Set from MATCHED on; cleared by a requeue; kept when the ticket ends. */
  readonly matchId?: string;
  readonly stateChangedAt: Date;
  /**
   * Set at creation as the API validated them against the mode's declaration (attribute-rules.ts)
   * and never changed; absent reads as none.
   */
  readonly attributes?: TicketAttributes;
}

/** What a requeue needs to know about the match that failed. */
export interface FailedMatch {
  readonly matchId: string;
  /** The state the match was in when it failed. */
  readonly failedFrom: MatchState;
  readonly reason: MatchFailureReason;
}

/**
 * Commands that concern a match name it, so a stale command for a match the ticket has since left
 * (requeued and matched again) fails with MATCH_MISMATCH instead of acting on the new match.
 */
export type TicketCommand =
  | { readonly to: 'MATCHED'; readonly matchId: string }
  | { readonly to: 'ASSIGNED' | 'CONNECTED' | 'COMPLETED'; readonly matchId: string }
  | {
      readonly to: 'CANCELLED';
      readonly reason:
        'PLAYER_CANCELLED' | 'PARTY_MEMBER_CANCELLED' | 'OPERATOR_RELEASED' | 'RULES_CHANGED';
    }
  | {
      readonly to: 'CANCELLED';
      /** ACCEPTANCE_DECLINED: the player declined the match's ready check. */
      readonly reason: 'MATCH_CANCELLED' | 'ACCEPTANCE_DECLINED';
      readonly matchId: string;
    }
  | {
      readonly to: 'FAILED';
      /** ACCEPTANCE_TIMEOUT: the player let the match's ready check run out. */
      readonly reason: 'NO_SHOW' | 'MATCH_FAILED' | 'ACCEPTANCE_TIMEOUT' | 'ABANDONED';
      readonly matchId: string;
    }
  /** Refused (HEARTBEAT_NOT_EXPIRED) while the last heartbeat is within the timeout. */
  | { readonly to: 'EXPIRED'; readonly heartbeatTimeoutMs: number }
  /**
   * Refused (SEARCH_NOT_TIMED_OUT) until the ticket has searched `searchTimeoutMs` since
   * `searchingSince` (when its row was created: heartbeats do not restart it, and the enqueue time
   * a requeue priority keeps does not shorten it).
   */
  | { readonly to: 'EXPIRED'; readonly searchTimeoutMs: number; readonly searchingSince: Date }
  /**
   * A party mate's ticket expired (PARTY_MEMBER_EXPIRED), or the party searched past its mode's
   * timeout (SEARCH_TIMED_OUT, said of every member): this one leaves with it.
   */
  | { readonly to: 'EXPIRED'; readonly reason: 'PARTY_MEMBER_EXPIRED' | 'SEARCH_TIMED_OUT' }
  | { readonly to: 'SEARCHING'; readonly failedMatch: FailedMatch }
  /**
   * The backfill that added the ticket to a running match was cancelled before the player got
   * in (the server cancelled it or never accepted it, or the match ended): back to the queue.
   */
  | { readonly to: 'SEARCHING'; readonly backfillCancelled: { readonly matchId: string } }
  /** An operator cancelled the ticket's match before the player got in: back to the queue. */
  | { readonly to: 'SEARCHING'; readonly matchCancelled: { readonly matchId: string } };

export interface NewTicket {
  readonly id: string;
  readonly playerId: string;
  readonly mode: string;
  readonly rating: number;
  readonly predictedRtt?: Readonly<Record<string, number>>;
  /** Already validated against the mode's declaration; only their shape is checked here. */
  readonly attributes?: TicketAttributes;
  /**
   * An earlier enqueue time the ticket keeps (requeue priority: its player's match was lost with
   * its server), so it is served ahead of tickets enqueued since; never after `now`.
   */
  readonly queuedSince?: Date;
}

export interface TicketChange {
  readonly ticket: TicketSnapshot;
  readonly events: readonly TicketStateChanged[];
}

/** A new ticket: SEARCHING at revision 1, enqueued and heartbeating as of `now`. */
export function createTicket(input: NewTicket, now: Date): TicketChange {
  assertNow(now);
  const problems: string[] = [];
  if (!isUuid(input.id)) problems.push('id must be a canonical lowercase uuid');
  if (!isUuid(input.playerId)) problems.push('playerId must be a canonical lowercase uuid');
  if (!isLabel(input.mode)) problems.push('mode must be a 1-64 character name');
  if (typeof input.rating !== 'number' || !Number.isFinite(input.rating)) {
    problems.push('rating must be a finite number');
  }
  // Only absence means "no probe yet"; a null is a caller's nil map and is refused, not papered over.
  const predictedRtt = input.predictedRtt === undefined ? {} : input.predictedRtt;
  problems.push(...rttProblems(predictedRtt));
  const attributes = input.attributes === undefined ? {} : input.attributes;
  problems.push(...attributesShapeProblems(attributes));
  const since = input.queuedSince;
  if (since !== undefined && !(Number.isFinite(since.getTime()) && since <= now)) {
    problems.push('queuedSince must be a valid instant no later than now');
  }
  if (problems.length > 0) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `invalid ticket: ${problems.join('; ')}`,
      { ticketId: input.id, problems },
    );
  }
  const at = now.getTime();
  const ticket: TicketSnapshot = Object.freeze({
    id: input.id,
    playerId: input.playerId,
    mode: input.mode,
    state: 'SEARCHING',
    revision: FIRST_REVISION,
    rating: input.rating,
    predictedRtt: Object.freeze({ ...predictedRtt }),
    attributes: Object.freeze({ ...attributes }),
    enqueuedAt: new Date(since?.getTime() ?? at),
    lastHeartbeatAt: new Date(at),
    stateChangedAt: new Date(at),
  });
  return Object.freeze({
    ticket,
    events: Object.freeze([ticketStateChanged(ticket, null, undefined, undefined)]),
  });
}

/** The snapshot after `command` (revision + 1) and the event announcing it; throws on an illegal one. */
export function transitionTicket(
  ticket: TicketSnapshot,
  command: TicketCommand,
  now: Date,
): TicketChange {
  assertNow(now);
  if (!isTicketState(ticket.state)) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `ticket ${ticket.id} has unknown state ${String(ticket.state)}`,
      { ticketId: ticket.id },
    );
  }
  const from = ticket.state;
  if (!canTransitionTicket(from, command.to)) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `ticket ${ticket.id} cannot go from ${from} to ${String(command.to)}`,
      { aggregateType: 'ticket', aggregateId: ticket.id, from, to: command.to },
    );
  }
  const reason = guardCommand(ticket, command, now);
  const allowed = ticketReasonsFor(from, command.to);
  if (
    allowed.length > 0 ? reason === undefined || !allowed.includes(reason) : reason !== undefined
  ) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `ticket ${ticket.id}: ${from} -> ${command.to} takes ${allowed.length > 0 ? `a reason out of ${allowed.join(', ')}` : 'no reason'}, got ${String(reason)}`,
      { aggregateType: 'ticket', aggregateId: ticket.id, from, to: command.to, reason },
    );
  }
  const eventMatchId = command.to === 'MATCHED' ? command.matchId : ticket.matchId;
  const { matchId: _held, ...rest } = ticket;
  const nextMatchId = command.to === 'SEARCHING' ? undefined : eventMatchId;
  const next: TicketSnapshot = Object.freeze({
    ...rest,
    predictedRtt: Object.freeze({ ...ticket.predictedRtt }),
    enqueuedAt: new Date(ticket.enqueuedAt.getTime()),
    lastHeartbeatAt: new Date(ticket.lastHeartbeatAt.getTime()),
    state: command.to,
    revision: nextRevision(ticket.revision),
    stateChangedAt: new Date(now.getTime()),
    ...(nextMatchId === undefined ? {} : { matchId: nextMatchId }),
  });
  return Object.freeze({
    ticket: next,
    events: Object.freeze([ticketStateChanged(next, from, eventMatchId, reason)]),
  });
}

/** Checks what the command claims against the ticket; returns the reason its event carries. */
function guardCommand(
  ticket: TicketSnapshot,
  command: TicketCommand,
  now: Date,
): TicketReason | undefined {
  switch (command.to) {
    case 'MATCHED':
      if (!isUuid(command.matchId)) {
        throw new DomainError(
          DomainErrorCode.INVALID_ARGUMENT,
          'matchId must be a canonical lowercase uuid',
          { ticketId: ticket.id },
        );
      }
      return undefined;
    case 'ASSIGNED':
    case 'CONNECTED':
    case 'COMPLETED':
      assertSameMatch(ticket, command.matchId);
      return undefined;
    case 'CANCELLED':
      if ('matchId' in command) assertSameMatch(ticket, command.matchId);
      return command.reason;
    case 'FAILED':
      assertSameMatch(ticket, command.matchId);
      return command.reason;
    case 'EXPIRED':
      if ('reason' in command) return command.reason;
      if ('searchTimeoutMs' in command) {
        if (now.getTime() - command.searchingSince.getTime() < command.searchTimeoutMs) {
          throw new DomainError(
            DomainErrorCode.SEARCH_NOT_TIMED_OUT,
            `ticket ${ticket.id} has searched for less than ${command.searchTimeoutMs} ms`,
            { ticketId: ticket.id, searchingSince: command.searchingSince.toISOString() },
          );
        }
        return 'SEARCH_TIMED_OUT';
      }
      if (!heartbeatExpired(ticket, now, command.heartbeatTimeoutMs)) {
        throw new DomainError(
          DomainErrorCode.HEARTBEAT_NOT_EXPIRED,
          `ticket ${ticket.id} heartbeated within the last ${command.heartbeatTimeoutMs} ms`,
          { ticketId: ticket.id, lastHeartbeatAt: ticket.lastHeartbeatAt.toISOString() },
        );
      }
      return 'HEARTBEAT_TIMEOUT';
    case 'SEARCHING': {
      if ('backfillCancelled' in command) {
        assertSameMatch(ticket, command.backfillCancelled.matchId);
        return 'BACKFILL_CANCELLED';
      }
      if ('matchCancelled' in command) {
        assertSameMatch(ticket, command.matchCancelled.matchId);
        return 'MATCH_CANCELLED';
      }
      const { failedMatch } = command;
      assertSameMatch(ticket, failedMatch.matchId);
      if (!matchFailureAllowsRequeue(failedMatch.failedFrom, failedMatch.reason)) {
        throw new DomainError(
          DomainErrorCode.REQUEUE_NOT_ALLOWED,
          `ticket ${ticket.id}: a match that failed from ${failedMatch.failedFrom} with ${failedMatch.reason} does not requeue its tickets`,
          { ticketId: ticket.id, ...failedMatch },
        );
      }
      return 'MATCH_FAILED';
    }
  }
}

function assertSameMatch(ticket: TicketSnapshot, matchId: string): void {
  if (ticket.matchId !== matchId) {
    throw new DomainError(
      DomainErrorCode.MATCH_MISMATCH,
      `ticket ${ticket.id} belongs to match ${String(ticket.matchId)}, not ${String(matchId)}`,
      { ticketId: ticket.id, ticketMatchId: ticket.matchId, commandMatchId: matchId },
    );
  }
}

/**
 * Whether the last heartbeat is older than the timeout; the exact complement of the heartbeat
 * condition of `validCandidate`, so no ticket is both matchable and expirable.
 */
export function heartbeatExpired(
  ticket: Pick<TicketSnapshot, 'lastHeartbeatAt'>,
  now: Date,
  heartbeatTimeoutMs: number,
): boolean {
  assertNow(now);
  assertTimeout(heartbeatTimeoutMs);
  if (!isValidDate(ticket.lastHeartbeatAt)) return true;
  return now.getTime() - ticket.lastHeartbeatAt.getTime() > heartbeatTimeoutMs;
}

export function assertTimeout(heartbeatTimeoutMs: number): void {
  if (
    typeof heartbeatTimeoutMs !== 'number' ||
    !Number.isFinite(heartbeatTimeoutMs) ||
    heartbeatTimeoutMs < 0
  ) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `heartbeatTimeoutMs must be a finite number >= 0, got ${String(heartbeatTimeoutMs)}`,
    );
  }
}

function attributesShapeProblems(attributes: unknown): string[] {
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
    return [
      'attributes must be an object of name -> string, number or list of strings, never null',
    ];
  }
  return Object.entries(attributes).flatMap(([name, value]) =>
    typeof value === 'string' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    (Array.isArray(value) && value.every((element) => typeof element === 'string'))
      ? []
      : [`attributes.${name} must be a string, a finite number or a list of strings`],
  );
}

function rttProblems(predictedRtt: unknown): string[] {
  if (typeof predictedRtt !== 'object' || predictedRtt === null || Array.isArray(predictedRtt)) {
    return ['predictedRtt must be an object of region -> ms (empty before any probe), never null'];
  }
  return Object.entries(predictedRtt).flatMap(([region, ms]) => {
    const problems: string[] = [];
    if (!isLabel(region))
      problems.push(`predictedRtt region ${JSON.stringify(region)} is not a 1-64 character name`);
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      problems.push(`predictedRtt.${region} must be a finite number of ms >= 0`);
    }
    return problems;
  });
}

function ticketStateChanged(
  ticket: TicketSnapshot,
  from: TicketState | null,
  matchId: string | undefined,
  reason: TicketReason | undefined,
): TicketStateChanged {
  return Object.freeze({
    event: TICKET_STATE_CHANGED,
    ...stateChangeEnvelope('ticket', ticket),
    playerIds: Object.freeze([ticket.playerId]),
    payload: Object.freeze({
      ticketId: ticket.id,
      from,
      to: ticket.state,
      mode: ticket.mode,
      enqueuedAt: ticket.enqueuedAt.toISOString(),
      ...(matchId === undefined ? {} : { matchId }),
      ...(reason === undefined ? {} : { reason }),
    }),
  });
}
