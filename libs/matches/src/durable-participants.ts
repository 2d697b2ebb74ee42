export interface DurableParticipant {
  readonly playerId: string;
  readonly ticketId: string;
  readonly team: number;
}

/**
 * A row of the `durable_participants` view (migration 1764710000000): a participant of a match
 * whose ticket is still bound to it (it names the match and is MATCHED, ASSIGNED or CONNECTED).
 * The one definition the allocator signs against (AllocationStore.progress), publishes against
 * (RosterStore.publish) and the roster and registration checks re-validate against
 * (RosterStore.liveRoster), so what was signed and what is served cannot drift. Readers use it
 * inside one statement (one snapshot).
 */
export interface DurableParticipantRow {
  player_id: string;
  ticket_id: string;
  team: number;
}

export function toDurable(row: DurableParticipantRow): DurableParticipant {
  return { playerId: row.player_id, ticketId: row.ticket_id, team: row.team };
}
