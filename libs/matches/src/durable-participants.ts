import { boundTicketJoin } from '@matchplane/tickets';

export interface DurableParticipant {
  readonly playerId: string;
  readonly ticketId: string;
  readonly team: number;
}

const bound = boundTicketJoin('t', 'p.ticket_id', '$1');

/**
 * The participants still bound to match $1: their ticket is live and names this match. The one
 * definition the allocator signs against (AllocationStore.progress), publishes against
 * (RosterStore.publish) and the roster and registration checks re-validate against
 * (RosterStore.liveRoster), so what was signed and what is served cannot drift. A read-only join
 * over the participants and their tickets (the tickets' side is TicketStore's fragment), always
 * inside one statement (one snapshot).
 */
export const DURABLE_PARTICIPANTS_SQL = `SELECT p.player_id, p.ticket_id, p.team
         FROM match_participants p
         ${bound.join}
        WHERE p.match_id = $1 AND ${bound.condition}`;

/** A row of {@link DURABLE_PARTICIPANTS_SQL} (or its json_agg). */
export interface DurableParticipantRow {
  player_id: string;
  ticket_id: string;
  team: number;
}

export function toDurable(row: DurableParticipantRow): DurableParticipant {
  return { playerId: row.player_id, ticketId: row.ticket_id, team: row.team };
}
