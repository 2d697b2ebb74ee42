import { ErrorCode, type TicketExplanation, type TicketResponse } from '@matchplane/contracts';
import { measuredRegions } from '@matchplane/domain';
import { CodedError } from '@matchplane/errors';
import type { QueueWaitEstimates, StoredTicket } from '@matchplane/tickets';

/*
 * What the queue routes answer: a ticket as the API shows it, and the refusals about tickets.
 */

/** The API view of a ticket. */
export function ticketResponse(
  ticket: StoredTicket,
  now: Date,
  explanation?: TicketExplanation,
  estimatedWaitSeconds?: number | null,
): TicketResponse {
  const predictedRtt = ticket.predictedRtt;
  const end = ticket.finishedAt ?? (ticket.state === 'SEARCHING' ? now : ticket.stateChangedAt);
  return {
    id: ticket.id,
    playerId: ticket.playerId,
    mode: ticket.mode,
    state: ticket.state,
    revision: ticket.revision,
    regionsMeasured: measuredRegions(predictedRtt).sort(),
    predictedRttMs: { ...predictedRtt },
    enqueuedAt: ticket.enqueuedAt.toISOString(),
    lastHeartbeatAt: ticket.lastHeartbeatAt.toISOString(),
    waitSeconds: Math.max(0, Math.round((end.getTime() - ticket.enqueuedAt.getTime()) / 100) / 10),
    attributes: Object.fromEntries(
      Object.entries(ticket.attributes).map(([name, value]) => [
        name,
        typeof value === 'object' ? [...value] : value,
      ]),
    ),
    ...(ticket.matchId ? { matchId: ticket.matchId } : {}),
    ...(ticket.endReason ? { endReason: ticket.endReason } : {}),
    ...(explanation && ticket.state === 'SEARCHING' ? { explanation } : {}),
    ...(estimatedWaitSeconds !== undefined && ticket.state === 'SEARCHING'
      ? { estimatedWaitSeconds }
      : {}),
    ...(ticket.party ? { partyTicketId: ticket.party.id, partySize: ticket.party.size } : {}),
  };
}

/** The region a searching ticket is most likely matched in: its lowest measured RTT. */
export function likeliestRegion(
  predictedRtt: Readonly<Record<string, number>>,
): string | undefined {
  let best: [string, number] | undefined;
  for (const [region, rtt] of Object.entries(predictedRtt)) {
    if (Number.isFinite(rtt) && (!best || rtt < best[1])) best = [region, rtt];
  }
  return best?.[0];
}

export function ticketNotFound(ticketId: string): CodedError {
  // Another player's ticket is indistinguishable from a missing one: ids are not disclosed.
  return new CodedError(ErrorCode.TICKET_NOT_FOUND, `No ticket ${ticketId} of this player`);
}

/** 409 TICKET_FINISHED, saying how the ticket ended (`ticketState`, `endReason`). */
export function ticketFinished(ticket: StoredTicket): CodedError {
  const why = ticket.endReason ? ` (${ticket.endReason})` : '';
  return new CodedError(
    ErrorCode.TICKET_FINISHED,
    `Ticket ${ticket.id} is ${ticket.state}${why}; create a new ticket to queue again`,
    {
      extensions: {
        ticketState: ticket.state,
        ...(ticket.endReason ? { endReason: ticket.endReason } : {}),
      },
    },
  );
}

export function liveTicketConflict(ticketId?: string): CodedError {
  return new CodedError(
    ErrorCode.TICKET_ALREADY_LIVE,
    `This player already holds a live ticket${ticketId ? ` (${ticketId})` : ''}; cancel it or wait for its match to end`,
  );
}

/** A searching ticket's estimated wait (QueueWaitEstimates; null: no recent match to go by). */
export function estimatedWait(
  waits: QueueWaitEstimates,
  ticket: StoredTicket,
): number | null | undefined {
  if (ticket.state !== 'SEARCHING') return undefined;
  const region = likeliestRegion(ticket.predictedRtt);
  return region === undefined ? null : waits.estimateSeconds(ticket.mode, region);
}
