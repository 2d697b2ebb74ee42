import { assertNow, isValidDate } from '../shared/value.guards';
import { assertTimeout } from '../ticket/ticket.aggregate';
import type { TicketState } from '../ticket/ticket-state.machine';

/** Why a ticket is not matchable; null when it is. */
export const CandidateRejection = {
  NOT_SEARCHING: 'NOT_SEARCHING',
  HEARTBEAT_STALE: 'HEARTBEAT_STALE',
  NO_REGION: 'NO_REGION',
} as const;
export type CandidateRejection = (typeof CandidateRejection)[keyof typeof CandidateRejection];

/**
 * What candidate validity reads. `predictedRtt` is `unknown` because the candidate projection
 * reads it back from JSON, where a nil map can arrive as null: that must read as "no region",
 * never throw.
 */
export interface CandidateView {
  readonly state: TicketState;
  readonly lastHeartbeatAt: Date;
  readonly predictedRtt: unknown;
}

/**
 * The one definition of a matchable ticket, shared by the candidate projection and the matcher:
 * SEARCHING, heartbeat no older than the timeout, and at least one region with a finite
 * non-negative predicted RTT.
 */
export function validCandidate(
  ticket: CandidateView,
  now: Date,
  heartbeatTimeoutMs: number,
): boolean {
  return candidateRejection(ticket, now, heartbeatTimeoutMs) === null;
}

/** The first reason `ticket` is not a valid candidate, or null (for metrics and logs). */
export function candidateRejection(
  ticket: CandidateView,
  now: Date,
  heartbeatTimeoutMs: number,
): CandidateRejection | null {
  assertNow(now);
  assertTimeout(heartbeatTimeoutMs);
  if (ticket.state !== 'SEARCHING') return 'NOT_SEARCHING';
  // A heartbeat stamped slightly ahead of `now` (another replica's clock) is fresh, not stale.
  if (
    !isValidDate(ticket.lastHeartbeatAt) ||
    now.getTime() - ticket.lastHeartbeatAt.getTime() > heartbeatTimeoutMs
  ) {
    return 'HEARTBEAT_STALE';
  }
  if (measuredRegions(ticket.predictedRtt).length === 0) return 'NO_REGION';
  return null;
}

/** The regions with a usable predicted RTT (finite, >= 0 ms), ignoring anything else in the map. */
export function measuredRegions(predictedRtt: unknown): string[] {
  if (typeof predictedRtt !== 'object' || predictedRtt === null || Array.isArray(predictedRtt))
    return [];
  // A loop rather than entries/filter/map: a matching pass calls this for every candidate.
  const regions: string[] = [];
  for (const region of Object.keys(predictedRtt)) {
    const ms: unknown = (predictedRtt as Record<string, unknown>)[region];
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) regions.push(region);
  }
  return regions;
}
