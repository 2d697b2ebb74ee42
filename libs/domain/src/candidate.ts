import type { TicketState } from './ticket.machine';

export type RttByRegion = Readonly<Record<string, number>>;

export interface CandidateView {
  state: TicketState;
  lastHeartbeatAt: Date;
  predictedRtt: RttByRegion | null | undefined;
}

/** Regions with a usable measurement (finite, non-negative milliseconds). */
export function measuredRegions(rtt: RttByRegion | null | undefined): string[] {
  if (!rtt || typeof rtt !== 'object' || Array.isArray(rtt)) return [];
  return Object.entries(rtt)
    .filter(([, ms]) => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)
    .map(([region]) => region);
}

/**
 * Whether a ticket may be matched: SEARCHING, heartbeating within the timeout, and measured to at
 * least one region. Shared by the candidate projection and the matcher's re-check.
 */
export function validCandidate(ticket: CandidateView, now: Date, heartbeatTimeoutMs: number): boolean {
  return (
    ticket.state === 'SEARCHING' &&
    now.getTime() - ticket.lastHeartbeatAt.getTime() <= heartbeatTimeoutMs &&
    measuredRegions(ticket.predictedRtt).length > 0
  );
}
