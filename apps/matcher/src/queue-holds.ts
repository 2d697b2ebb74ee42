import {
  closedRegions,
  measuredRegions,
  modePause,
  type MatchCandidate,
  type QueueControl,
} from '@matchplane/domain';
import type { Explained } from './ticket-explanations';

/**
 * The operator holds as one pass of `mode` obeys them: a paused mode matches nobody (every
 * searching ticket is told why and kept); a paused or draining region is taken out of every
 * candidate's regions, so no new match is placed there, and a candidate left with none waits.
 */
export function applyQueueHolds(
  controls: readonly QueueControl[],
  mode: string,
  matchable: readonly MatchCandidate[],
): { pool: MatchCandidate[]; held: Explained[] } {
  const pause = modePause(controls, mode);
  if (pause) {
    const message = `the ${mode} queue is paused by an operator (${pause.reason}); the ticket keeps its place`;
    return {
      pool: [],
      held: matchable.map(({ ticketId }) => ({ ticketId, code: 'MODE_PAUSED', message })),
    };
  }
  const closed = closedRegions(controls);
  if (closed.size === 0) return { pool: [...matchable], held: [] };
  const pool: MatchCandidate[] = [];
  const held: Explained[] = [];
  for (const candidate of matchable) {
    const open = Object.entries(candidate.predictedRtt).filter(([region]) => !closed.has(region));
    if (open.length > 0) {
      pool.push({ ...candidate, predictedRtt: Object.fromEntries(open) });
      continue;
    }
    const regions = measuredRegions(candidate.predictedRtt).join(', ');
    held.push({
      ticketId: candidate.ticketId,
      code: 'REGIONS_PAUSED',
      message: `every region the ticket measured (${regions}) is paused or draining; it waits for one to open`,
    });
  }
  return { pool, held };
}
