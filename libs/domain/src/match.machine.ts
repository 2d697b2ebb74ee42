import { DomainError, DomainErrorCode } from './domain.error';

export const MATCH_STATES = [
  'ALLOCATING',
  'PROCESS_READY',
  'ASSIGNMENT_READY',
  'IN_PROGRESS',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
] as const;
export type MatchState = (typeof MATCH_STATES)[number];

export const TERMINAL_MATCH_STATES: ReadonlySet<MatchState> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

const FORWARD: Partial<Record<MatchState, MatchState>> = {
  ALLOCATING: 'PROCESS_READY',
  PROCESS_READY: 'ASSIGNMENT_READY',
  ASSIGNMENT_READY: 'IN_PROGRESS',
  IN_PROGRESS: 'COMPLETED',
};

/** The forward chain, or FAILED / CANCELLED from any state that has not finished. */
export function canTransitionMatch(from: MatchState, to: MatchState): boolean {
  if (TERMINAL_MATCH_STATES.has(from)) return false;
  return FORWARD[from] === to || to === 'FAILED' || to === 'CANCELLED';
}

export interface MatchParticipant {
  playerId: string;
  ticketId: string;
  team: number;
}

export interface MatchSnapshot {
  id: string;
  mode: string;
  region: string;
  state: MatchState;
  revision: number;
  participants: readonly MatchParticipant[];
  failureReason?: string;
  stateChangedAt: Date;
}

/** The one event a match emits: clients follow a match through it, revision by revision. */
export interface MatchStateChanged {
  type: 'match.state_changed';
  matchId: string;
  revision: number;
  from: MatchState | null;
  to: MatchState;
  mode: string;
  region: string;
  reason?: string;
  /** Every participant, no-shows included; the first event carries the teams. */
  participants: readonly MatchParticipant[];
  occurredAt: Date;
}

export interface MatchChange {
  match: MatchSnapshot;
  events: MatchStateChanged[];
}

export function createMatch(
  input: { id: string; mode: string; region: string; participants: readonly MatchParticipant[] },
  now: Date,
): MatchChange {
  if (input.participants.length === 0) throw new DomainError(DomainErrorCode.INVALID_MATCH, 'a match needs participants');
  const players = new Set(input.participants.map((p) => p.playerId));
  if (players.size !== input.participants.length) {
    throw new DomainError(DomainErrorCode.INVALID_MATCH, 'a player appears twice in the match');
  }
  const match: MatchSnapshot = {
    id: input.id,
    mode: input.mode,
    region: input.region,
    state: 'ALLOCATING',
    revision: 1,
    // Canonical order (team, then player id), so a folded history equals the stored row.
    participants: [...input.participants]
      .sort((a, b) => a.team - b.team || (a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0))
      .map((p) => ({ ...p })),
    stateChangedAt: now,
  };
  return { match, events: [stateChanged(match, null, now)] };
}

export function transitionMatch(match: MatchSnapshot, to: MatchState, now: Date, reason?: string): MatchChange {
  if (!canTransitionMatch(match.state, to)) {
    throw new DomainError(DomainErrorCode.ILLEGAL_TRANSITION, `match ${match.id} cannot go from ${match.state} to ${to}`);
  }
  const next: MatchSnapshot = {
    ...match,
    state: to,
    revision: match.revision + 1,
    stateChangedAt: now,
    ...(to === 'FAILED' || to === 'CANCELLED' ? { failureReason: reason } : {}),
  };
  return { match: next, events: [stateChanged(next, match.state, now, reason)] };
}

function stateChanged(match: MatchSnapshot, from: MatchState | null, now: Date, reason?: string): MatchStateChanged {
  return {
    type: 'match.state_changed',
    matchId: match.id,
    revision: match.revision,
    from,
    to: match.state,
    mode: match.mode,
    region: match.region,
    ...(reason !== undefined ? { reason } : {}),
    participants: match.participants,
    occurredAt: now,
  };
}

/** Folds a match's history (its events in revision order) into its state; gaps are errors. */
export function foldMatchEvents(events: readonly MatchStateChanged[]): MatchSnapshot {
  let match: MatchSnapshot | undefined;
  for (const event of events) {
    if (!match) {
      if (event.revision !== 1 || event.from !== null || event.to !== 'ALLOCATING') {
        throw new DomainError(DomainErrorCode.EVENT_OUT_OF_ORDER, `history of ${event.matchId} must start at revision 1 in ALLOCATING`);
      }
      match = createMatch({ id: event.matchId, mode: event.mode, region: event.region, participants: event.participants }, event.occurredAt).match;
      continue;
    }
    if (event.matchId !== match.id) {
      throw new DomainError(DomainErrorCode.EVENT_FOR_OTHER_AGGREGATE, `event of ${event.matchId} in the history of ${match.id}`);
    }
    if (event.revision !== match.revision + 1 || event.from !== match.state) {
      throw new DomainError(
        DomainErrorCode.EVENT_OUT_OF_ORDER,
        `match ${match.id}: expected revision ${match.revision + 1} from ${match.state}, got ${event.revision} from ${String(event.from)}`,
      );
    }
    match = transitionMatch(match, event.to, event.occurredAt, event.reason).match;
  }
  if (!match) throw new DomainError(DomainErrorCode.EVENT_OUT_OF_ORDER, 'an empty history folds to nothing');
  return match;
}
