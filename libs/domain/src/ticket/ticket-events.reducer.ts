import { DomainError, DomainErrorCode } from '../shared/domain.error';
import { expectNextEvent, inconsistent, type HistoryEvent } from '../shared/history.guards';
import { isIsoInstant, isLabel, isUuid } from '../shared/value.guards';
import type { TicketSnapshot } from './ticket.aggregate';
import { TICKET_STATE_CHANGED, type TicketStateChangedPayload } from './ticket.events';
import {
  canTransitionTicket,
  isTicketState,
  ticketEventHasMatch,
  ticketReasonsFor,
} from './ticket-state.machine';

/** A `ticket.state_changed` as a transition returns it, or as the outbox delivers it. */
export type TicketHistoryEvent = HistoryEvent<
  typeof TICKET_STATE_CHANGED,
  TicketStateChangedPayload
>;

/** What a ticket's events tell: heartbeats, RTTs, rating and attributes are not events, so they are not here. */
export type TicketHistoryState = Pick<
  TicketSnapshot,
  'id' | 'playerId' | 'mode' | 'state' | 'revision' | 'enqueuedAt' | 'matchId' | 'stateChangedAt'
>;

/** Like `foldMatchEvents`, for a ticket. */
export function foldTicketEvents(
  events: readonly TicketHistoryEvent[],
  since?: TicketHistoryState,
): TicketHistoryState {
  const folded = events.reduce<TicketHistoryState | undefined>(applyTicketEvent, since);
  if (folded === undefined)
    throw inconsistent('a ticket history needs at least its creation event');
  return folded;
}

export function applyTicketEvent(
  current: TicketHistoryState | undefined,
  event: TicketHistoryEvent,
): TicketHistoryState {
  const where = `ticket ${event.aggregateId} r${String(event.revision)}`;
  if (event.event !== TICKET_STATE_CHANGED || event.aggregateType !== 'ticket') {
    throw inconsistent(
      `${where}: ${String(event.event)} on ${event.aggregateType} is not a ticket event`,
    );
  }
  const { revision, occurredAt } = expectNextEvent(where, event, current, 'ticket');
  const { payload } = event;
  const [playerId, ...others] = event.playerIds;
  if (playerId === undefined || others.length > 0) {
    throw inconsistent(`${where}: a ticket event concerns exactly its player`);
  }
  if (payload.ticketId !== event.aggregateId) {
    throw inconsistent(
      `${where}: payload.ticketId ${String(payload.ticketId)} is not the aggregate id`,
    );
  }
  if (!isTicketState(payload.to))
    throw inconsistent(`${where}: unknown state ${String(payload.to)}`);
  if (current === undefined) {
    if (payload.from !== null || payload.to !== 'SEARCHING') {
      throw inconsistent(`${where}: a ticket history starts with null -> SEARCHING`);
    }
    if (!isUuid(event.aggregateId) || !isUuid(playerId) || !isLabel(payload.mode)) {
      throw inconsistent(`${where}: the creation needs uuid ticket and player ids and a mode`);
    }
  } else {
    if (payload.from !== current.state) {
      throw inconsistent(
        `${where}: says it left ${String(payload.from)}, but the ticket was ${current.state}`,
      );
    }
    if (!canTransitionTicket(current.state, payload.to)) {
      throw new DomainError(
        DomainErrorCode.ILLEGAL_TRANSITION,
        `${where}: ${current.state} -> ${payload.to} is not a legal transition`,
        { aggregateType: 'ticket', aggregateId: current.id, from: current.state, to: payload.to },
      );
    }
    if (playerId !== current.playerId || payload.mode !== current.mode) {
      throw inconsistent(`${where}: player or mode changed`);
    }
    if (
      payload.matchId !== undefined &&
      current.matchId !== undefined &&
      payload.matchId !== current.matchId
    ) {
      throw inconsistent(
        `${where}: names match ${payload.matchId}, but the ticket is in ${current.matchId}`,
      );
    }
  }
  const enqueuedAt = expectEnqueuedAt(where, payload, current);
  if (ticketEventHasMatch(payload.from, payload.to) !== (payload.matchId !== undefined)) {
    throw inconsistent(
      `${where}: ${String(payload.from)} -> ${payload.to} ${payload.matchId === undefined ? 'must' : 'must not'} name a match`,
    );
  }
  const allowed = ticketReasonsFor(payload.from, payload.to);
  if (
    allowed.length > 0
      ? payload.reason === undefined || !allowed.includes(payload.reason)
      : payload.reason !== undefined
  ) {
    throw inconsistent(
      `${where}: reason ${String(payload.reason)} does not fit ${String(payload.from)} -> ${payload.to}`,
    );
  }
  const matchId = payload.to === 'SEARCHING' ? undefined : payload.matchId;
  return Object.freeze({
    id: event.aggregateId,
    playerId,
    mode: payload.mode,
    state: payload.to,
    revision,
    enqueuedAt,
    ...(matchId === undefined ? {} : { matchId }),
    stateChangedAt: occurredAt,
  });
}

function expectEnqueuedAt(
  where: string,
  payload: TicketStateChangedPayload,
  current: TicketHistoryState | undefined,
): Date {
  if (!isIsoInstant(payload.enqueuedAt)) {
    throw inconsistent(
      `${where}: enqueuedAt ${String(payload.enqueuedAt)} is not an ISO-8601 UTC instant`,
    );
  }
  const parsed = new Date(payload.enqueuedAt);
  if (current !== undefined && parsed.getTime() !== current.enqueuedAt.getTime()) {
    throw inconsistent(`${where}: enqueuedAt changed from ${current.enqueuedAt.toISOString()}`);
  }
  return parsed;
}
