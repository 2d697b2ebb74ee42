import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '@matchplane/domain';
import { cursorInstantSql, decodeCursor, keysetPage } from '@matchplane/persistence';

/**
 * One ticket's arrival in the queue, as the simulator replays it (docs/SIMULATOR.md): who queued,
 * for what, measured what, and, if the player left before being matched (cancelled, or stopped
 * heartbeating), after how long.
 */
export interface QueueArrival {
  ticketId: string;
  playerId: string;
  mode: string;
  rating: number;
  rtt: Record<string, number>;
  attributes: Record<string, string | number | string[]>;
  enqueuedAt: string;
  party?: { id: string; size: number };
  cancelAfterMs?: number;
}

export interface QueueArrivalPage {
  arrivals: QueueArrival[];
  nextCursor: string | null;
}

export const QUEUE_ARRIVALS_MAX_LIMIT = 10_000;

interface ArrivalRow {
  id: string;
  player_id: string;
  mode: string;
  rating: number;
  predicted_rtt: Record<string, number>;
  attributes: Record<string, string | number | string[]>;
  enqueued_at: Date;
  party_ticket_id: string | null;
  party_size: number | null;
  left_after_ms: string | null;
  cursor_at: string;
}

/**
 * The queue's recent arrivals, oldest first, for an operator's capture (libs/tickets owns
 * `queue_tickets`). A read of the retained rows only: retention decides how far back it reaches.
 */
@Injectable()
export class TicketArrivals {
  constructor(private readonly dataSource: DataSource) {}

  async page(
    range: { from: Date; until: Date },
    limit: number,
    cursor?: string,
  ): Promise<QueueArrivalPage> {
    const params: unknown[] = [range.from, range.until];
    // A lobby member's ticket never queued: replayed as an arrival it would be matched anew.
    const conditions = ['enqueued_at >= $1', 'enqueued_at < $2', `origin = 'queue'`];
    if (cursor !== undefined) {
      const after = decodeCursor(cursor, isUuid);
      params.push(after.at, after.id);
      conditions.push(
        `(enqueued_at, id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
      );
    }
    params.push(limit + 1);
    const rows = await this.dataSource.query<ArrivalRow[]>(
      `SELECT id, player_id, mode, rating, predicted_rtt, attributes, enqueued_at, party_ticket_id, party_size,
              CASE WHEN match_id IS NULL AND state IN ('CANCELLED', 'EXPIRED')
                   THEN round(extract(epoch FROM finished_at - enqueued_at) * 1000) END AS left_after_ms,
              ${cursorInstantSql('enqueued_at')} AS cursor_at
         FROM queue_tickets
        WHERE ${conditions.join(' AND ')}
        ORDER BY enqueued_at, id
        LIMIT $${params.length}`,
      params,
    );
    const { items, nextCursor } = keysetPage(rows, limit, arrivalOf);
    return { arrivals: items, nextCursor };
  }
}

function arrivalOf(row: ArrivalRow): QueueArrival {
  return {
    ticketId: row.id,
    playerId: row.player_id,
    mode: row.mode,
    rating: row.rating,
    rtt: row.predicted_rtt ?? {},
    attributes: row.attributes ?? {},
    enqueuedAt: row.enqueued_at.toISOString(),
    ...(row.party_ticket_id !== null && row.party_size !== null
      ? { party: { id: row.party_ticket_id, size: row.party_size } }
      : {}),
    ...(row.left_after_ms === null ? {} : { cancelAfterMs: Number(row.left_after_ms) }),
  };
}
