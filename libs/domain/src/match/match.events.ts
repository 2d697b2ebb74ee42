import type { DomainEventOf } from '../shared/domain.event';
import type { MatchEndReason, MatchState } from './match-state.machine';

export const MATCH_STATE_CHANGED = 'match.state_changed';

export interface MatchParticipant {
  readonly playerId: string;
  readonly ticketId: string;
  /** 0-based team index. */
  readonly team: number;
}

/**
 * The one event a match emits, from its creation (`from: null`) to its end, so a client follows a
 * match's whole history through one event type. Every event carries the roster, region and mode:
 * a client that resumes mid-history needs no earlier event to make sense of the current one.
 */
export interface MatchStateChangedPayload {
  readonly matchId: string;
  readonly from: MatchState | null;
  readonly to: MatchState;
  /** Present exactly when `to` is FAILED or CANCELLED. */
  readonly reason?: MatchEndReason;
  readonly region: string;
  /**
   * The region the match's game server runs in, from PROCESS_READY on (differs from `region`
   * only after an allocation fell back to another region). Absent before: consumers that do not
   * know it ignore it.
   */
  readonly serverRegion?: string;
  readonly mode: string;
  readonly participants: readonly MatchParticipant[];
}

export type MatchStateChanged = DomainEventOf<
  typeof MATCH_STATE_CHANGED,
  'match',
  MatchStateChangedPayload
>;

export const MATCH_PARTICIPANTS_ADDED = 'match.participants_added';

/**
 * A backfill added players to a running match (the state does not change). Carries the whole
 * roster after the change, as every match event does, and which participants are new.
 */
export interface MatchParticipantsAddedPayload {
  readonly matchId: string;
  /** The match's state, unchanged (IN_PROGRESS). */
  readonly state: MatchState;
  readonly region: string;
  readonly serverRegion?: string;
  readonly mode: string;
  readonly participants: readonly MatchParticipant[];
  readonly added: readonly MatchParticipant[];
  /** The backfill request that found them. */
  readonly backfillRequestId: string;
}

export type MatchParticipantsAdded = DomainEventOf<
  typeof MATCH_PARTICIPANTS_ADDED,
  'match',
  MatchParticipantsAddedPayload
>;

/** Every event a match emits. */
export type MatchEvent = MatchStateChanged | MatchParticipantsAdded;
