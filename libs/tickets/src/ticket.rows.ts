import type { EntityManager } from 'typeorm';
import { CodedError, LibraryErrorCode } from '@matchplane/errors';
import {
  isTerminalTicketState,
  type TicketChange,
  type TicketReason,
  type TicketSnapshot,
  type TicketAttributes,
  type TicketState,
} from '@matchplane/domain';

/** How a queue ticket is stored: its row and its columns (other owners read the bound_tickets view). */

/** A ticket as stored: the domain snapshot plus what the projection and the API read. */
export interface StoredTicket extends TicketSnapshot {
  /** The uncertainty (openskill sigma) of the player's rating when the ticket was created. */
  readonly ratingSigma: number;
  /** updated_at in µs, set by every write (clock_timestamp()): orders projection updates of one ticket. */
  readonly version: number;
  readonly finishedAt?: Date;
  /** Why an ended ticket ended (the reason of the transition that ended it; none for COMPLETED). */
  readonly endReason?: TicketReason;
  /** W3C trace context of the request that created the ticket (when traced): the matcher's link to it. */
  readonly traceparent?: string;
  /** As validated at creation (defaults filled in); `{}` for a mode without attributes. */
  readonly attributes: TicketAttributes;
  /** Set on a party member's ticket: the party ticket it belongs to (see {@link TicketParty}). */
  readonly party?: TicketParty;
}

/**
 * The party ticket a member's ticket belongs to: one id per enqueue of a party, shared by one
 * ticket per member, and the party's size. The tickets of a party ticket search, match and leave
 * the queue together.
 */
export interface TicketParty {
  readonly id: string;
  readonly size: number;
}

/** The ticket moved on since the caller read it; nothing was written. */
export class StaleTicketRevisionError extends CodedError<
  typeof LibraryErrorCode.STALE_TICKET_REVISION
> {
  constructor(
    readonly ticketId: string,
    readonly expectedRevision: number,
  ) {
    super(
      LibraryErrorCode.STALE_TICKET_REVISION,
      `ticket ${ticketId} is no longer at revision ${expectedRevision}`,
    );
    this.name = 'StaleTicketRevisionError';
  }
}

export interface TicketRow {
  id: string;
  player_id: string;
  mode: string;
  state: TicketState;
  revision: string;
  predicted_rtt: Record<string, number>;
  rating: number;
  rating_sigma: number;
  enqueued_at: Date;
  last_heartbeat_at: Date;
  match_id: string | null;
  updated_at: Date;
  finished_at: Date | null;
  end_reason: TicketReason | null;
  version_us: string;
  traceparent: string | null;
  attributes: Record<string, string | number | string[]>;
  party_ticket_id: string | null;
  party_size: number | null;
}

export const COLUMNS = `id, player_id, mode, state, revision, predicted_rtt, rating, rating_sigma, enqueued_at, last_heartbeat_at,
  match_id, updated_at, finished_at, end_reason, traceparent, attributes, party_ticket_id, party_size,
  (extract(epoch FROM updated_at) * 1000000)::bigint AS version_us`;

export const LIVE_STATES = `('SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED')`;

/**
 * Searching tickets whose player stopped heartbeating, oldest heartbeat first, on the partial
 * index queue_tickets_heartbeat_idx. `$1` = now minus the heartbeat timeout, `$2` = the batch
 * size, `$3` = ids to leave alone. SKIP LOCKED: a ticket another replica is expiring, or a
 * heartbeat is refreshing, is not waited for; a heartbeat committed since the scan is re-checked
 * against the predicate under the lock, so a revived ticket is not taken.
 */
export const EXPIRED_TICKETS_SQL = `SELECT t.id
  FROM queue_tickets t
 WHERE t.state = 'SEARCHING'
   AND t.last_heartbeat_at < $1::timestamptz
   AND t.id <> ALL ($3::uuid[])
 ORDER BY t.last_heartbeat_at
 LIMIT $2
   FOR UPDATE OF t SKIP LOCKED`;

export function toTicket(row: TicketRow): StoredTicket {
  return {
    id: row.id,
    playerId: row.player_id,
    mode: row.mode,
    state: row.state,
    revision: Number(row.revision),
    rating: row.rating,
    ratingSigma: row.rating_sigma,
    predictedRtt: row.predicted_rtt,
    enqueuedAt: row.enqueued_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    stateChangedAt: row.updated_at,
    version: Number(row.version_us),
    attributes: row.attributes,
    ...(row.match_id === null ? {} : { matchId: row.match_id }),
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
    ...(row.end_reason === null ? {} : { endReason: row.end_reason }),
    ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
    ...(row.party_ticket_id === null
      ? {}
      : { party: { id: row.party_ticket_id, size: Number(row.party_size) } }),
  };
}

/** The reason of a transition that ends the ticket; null for any other (and for COMPLETED). */
export function endReasonOf(change: TicketChange): TicketReason | null {
  if (!isTerminalTicketState(change.ticket.state)) return null;
  return change.events[0]?.payload.reason ?? null;
}

/** Every searching ticket, oldest first: the projection's rebuild source (TicketStore.searching). */
export async function searchingTickets(manager: EntityManager): Promise<StoredTicket[]> {
  const rows = await manager.query<TicketRow[]>(
    `SELECT ${COLUMNS} FROM queue_tickets WHERE state = 'SEARCHING' ORDER BY enqueued_at, id`,
  );
  return rows.map(toTicket);
}

/** A beat the liveness store holds, with the version of the candidate it was recorded on. */
export interface RecordedBeat {
  readonly at: Date;
  readonly version: number;
}

/**
 * Writes beats the liveness store recorded into their searching tickets' `last_heartbeat_at`,
 * never moving one back, in one statement (rows locked in id order, as heartbeats lock them). No
 * `updated_at`: a beat is no change of the ticket (its version, which orders projection writes,
 * stays). Answers the ids among them whose candidate misstates the row (no longer searching, or
 * another version): a projection write that never reached Redis, for the caller to repair.
 */
export async function checkpointBeats(
  manager: EntityManager,
  beats: ReadonlyMap<string, RecordedBeat>,
): Promise<{ written: number; stale: string[] }> {
  if (beats.size === 0) return { written: 0, stale: [] };
  const ordered = [...beats].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rows = await manager.query<{ written: string; stale: string[] }[]>(
    `WITH beats AS (
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS b(ticket_id, beat_at, version)
     ), written AS (
       UPDATE queue_tickets AS q SET last_heartbeat_at = b.beat_at
         FROM beats b
        WHERE q.id = b.ticket_id AND q.state = 'SEARCHING' AND q.last_heartbeat_at < b.beat_at
        RETURNING q.id
     )
     SELECT (SELECT count(*) FROM written) AS written,
            ARRAY(SELECT q.id::text FROM queue_tickets q JOIN beats b ON q.id = b.ticket_id
                   WHERE q.state <> 'SEARCHING'
                      OR (extract(epoch FROM q.updated_at) * 1000000)::bigint <> b.version) AS stale`,
    [
      ordered.map(([id]) => id),
      ordered.map(([, beat]) => beat.at),
      ordered.map(([, beat]) => beat.version),
    ],
  );
  const row = rows[0];
  return { written: Number(row?.written ?? 0), stale: row?.stale ?? [] };
}
