import { DomainError, DomainErrorCode } from '../shared/domain.error';
import {
  inconsistent,
  expectOccurredAt,
  expectRevision,
  sameIdSet,
} from '../shared/history.guards';
import type { HistoryEvent } from '../shared/history.guards';
import { nextRevision } from '../shared/revision';
import { assertNow } from '../shared/value.guards';
import {
  matchEventEnvelope,
  matchPlayerIds,
  matchWhereabouts,
  type MatchSnapshot,
} from './match.aggregate';
import type { DomainEventOf } from '../shared/domain.event';
import type { MatchParticipant } from './match.events';

export const MATCH_PRESENCE_CHANGED = 'match.presence_changed';

/**
 * Where a participant of a running match stands with its game server: LEFT (the server reported
 * the connection gone; may come back until `rejoinDeadline`), REJOINED (back on its team), or
 * ABANDONED (not back in time: final, with a cooldown and a rated loss).
 */
export const MatchPresence = {
  LEFT: 'LEFT',
  REJOINED: 'REJOINED',
  ABANDONED: 'ABANDONED',
} as const;
export type MatchPresence = (typeof MatchPresence)[keyof typeof MatchPresence];
export const MATCH_PRESENCES: readonly MatchPresence[] = Object.values(MatchPresence);

/**
 * A participant left, came back or abandoned a running match (the state does not change; the
 * revision does, so the event is ordered among the match's others). Carries the whole roster, as
 * every match event does.
 */
export interface MatchPresenceChangedPayload {
  readonly matchId: string;
  /** The match's state, unchanged (IN_PROGRESS). */
  readonly state: 'IN_PROGRESS';
  readonly region: string;
  readonly serverRegion?: string;
  readonly mode: string;
  readonly participants: readonly MatchParticipant[];
  readonly playerId: string;
  readonly presence: MatchPresence;
  /** ISO instant until which a LEFT player may rejoin; present exactly on LEFT. */
  readonly rejoinDeadline?: string;
}

export type MatchPresenceChanged = DomainEventOf<
  typeof MATCH_PRESENCE_CHANGED,
  'match',
  MatchPresenceChangedPayload
>;

export interface MatchPresenceChange {
  readonly match: MatchSnapshot;
  readonly events: readonly MatchPresenceChanged[];
}

/** The presences a player may move to from `from` (undefined: connected, never left). */
export function presenceExits(from: MatchPresence | undefined): readonly MatchPresence[] {
  switch (from) {
    case undefined:
    case 'REJOINED':
      return ['LEFT'];
    case 'LEFT':
      return ['REJOINED', 'ABANDONED'];
    case 'ABANDONED':
      return [];
  }
}

/**
 * `playerId`'s presence in the running match moves from `from` to `to` (revision + 1, state
 * unchanged): only while IN_PROGRESS, only a participant, only along {@link presenceExits}.
 */
export function changePresence(
  match: MatchSnapshot,
  playerId: string,
  from: MatchPresence | undefined,
  to: MatchPresence,
  now: Date,
  rejoinDeadline?: Date,
): MatchPresenceChange {
  assertNow(now);
  const where = {
    aggregateType: 'match',
    aggregateId: match.id,
    from: match.state,
    to: match.state,
  };
  if (match.state !== 'IN_PROGRESS') {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `match ${match.id} is ${match.state}: presence changes only while IN_PROGRESS`,
      where,
    );
  }
  if (!match.participants.some((p) => p.playerId === playerId)) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      `player ${playerId} is not in match ${match.id}`,
      { matchId: match.id, playerId },
    );
  }
  if (!presenceExits(from).includes(to)) {
    throw new DomainError(
      DomainErrorCode.ILLEGAL_TRANSITION,
      `player ${playerId} cannot go from ${from ?? 'CONNECTED'} to ${to}`,
      where,
    );
  }
  if ((to === 'LEFT') !== (rejoinDeadline !== undefined)) {
    throw new DomainError(
      DomainErrorCode.INVALID_ARGUMENT,
      'a rejoin deadline comes with LEFT and only with it',
      { matchId: match.id, playerId },
    );
  }
  const next: MatchSnapshot = Object.freeze({ ...match, revision: nextRevision(match.revision) });
  const event: MatchPresenceChanged = Object.freeze({
    event: MATCH_PRESENCE_CHANGED,
    ...matchEventEnvelope(next, now),
    payload: Object.freeze({
      matchId: next.id,
      state: 'IN_PROGRESS',
      ...matchWhereabouts(next),
      playerId,
      presence: to,
      ...(rejoinDeadline === undefined ? {} : { rejoinDeadline: rejoinDeadline.toISOString() }),
    }),
  });
  return Object.freeze({ match: next, events: Object.freeze([event]) });
}

/** The fold's step for a presence event: same match, state and roster, revision + 1. */
export function presenceChanged(
  where: string,
  current: MatchSnapshot | undefined,
  event: HistoryEvent<typeof MATCH_PRESENCE_CHANGED, MatchPresenceChangedPayload>,
): MatchSnapshot {
  if (current === undefined)
    throw inconsistent(`${where}: a match history starts with its creation`);
  const revision = expectRevision(event, current.revision + 1);
  expectOccurredAt(event);
  const { payload } = event;
  if (
    event.aggregateId !== current.id ||
    payload.matchId !== current.id ||
    current.state !== 'IN_PROGRESS' ||
    payload.state !== current.state
  ) {
    throw inconsistent(`${where}: a presence change belongs to this match while IN_PROGRESS`);
  }
  if (!current.participants.some((p) => p.playerId === payload.playerId)) {
    throw inconsistent(`${where}: player ${String(payload.playerId)} is not in the match`);
  }
  if (!sameIdSet(event.playerIds, matchPlayerIds(current))) {
    throw inconsistent(`${where}: playerIds are not exactly the participants`);
  }
  return Object.freeze({ ...current, revision });
}
