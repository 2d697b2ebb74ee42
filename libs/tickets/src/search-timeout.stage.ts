import type { DataSource, EntityManager } from 'typeorm';
import type { StageBatch } from '@matchplane/persistence';
import { SearchingTicketsStage, type ClaimedSearching } from './searching-tickets.ender';
import type { TicketStore } from './ticket.store';
import type { TicketReconciliationOptions } from './ticket-reconciliation.options';

/**
 * Searching tickets past their mode's timeout, counted from the ticket's creation (heartbeats do
 * not restart it; the enqueue time a requeue priority keeps does not shorten it), oldest first;
 * `skip` left alone. Served by queue_tickets_searching_idx (mode, state SEARCHING).
 */
const TIMED_OUT_TICKETS_SQL = `SELECT t.id, t.created_at
  FROM queue_tickets t
  JOIN unnest($1::text[], $2::float8[]) AS m(mode, timeout_ms) ON m.mode = t.mode
 WHERE t.state = 'SEARCHING'
   AND t.created_at <= $3::timestamptz - make_interval(secs => m.timeout_ms / 1000)
   AND t.id <> ALL ($4::uuid[])
 ORDER BY t.created_at
 LIMIT $5
   FOR UPDATE OF t SKIP LOCKED`;

/**
 * Ends searching tickets that searched longer than their mode's QUEUE_SEARCH_TIMEOUTS: EXPIRED
 * SEARCH_TIMED_OUT through the ticket state machine (which checks the time again), a party's
 * other searching tickets with it, one event each, a batch per short transaction. After commit the
 * tickets leave the candidate projection and the relay is woken; the player is told by the event.
 */
export class SearchTimeoutStage extends SearchingTicketsStage {
  constructor(
    dataSource: DataSource,
    tickets: TicketStore,
    private readonly options: Pick<TicketReconciliationOptions, 'batchSize' | 'searchTimeoutsMs'>,
  ) {
    // Beside heartbeat expiry: both end searching tickets before any match stage runs.
    super('search_timeouts', 'ticket_search_timeout', 11, dataSource, tickets, {
      to: 'EXPIRED',
      reason: 'SEARCH_TIMED_OUT',
    });
  }

  override batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    if (Object.keys(this.options.searchTimeoutsMs).length === 0)
      return Promise.resolve({ reconciled: { ticket_search_timeout: 0 }, taken: 0, failures: [] });
    return super.batch(now, skip);
  }

  protected async claim(
    manager: EntityManager,
    now: Date,
    skip: ReadonlySet<string>,
  ): Promise<ClaimedSearching> {
    const timeouts = Object.entries(this.options.searchTimeoutsMs);
    const rows = await manager.query<{ id: string; created_at: Date }[]>(TIMED_OUT_TICKETS_SQL, [
      timeouts.map(([mode]) => mode),
      timeouts.map(([, ms]) => ms),
      now,
      [...skip],
      this.options.batchSize,
    ]);
    const since = new Map(rows.map((row) => [row.id, row.created_at]));
    return {
      taken: rows.length,
      ids: rows.map((row) => row.id),
      own: (ticket) => {
        const searchTimeoutMs = this.options.searchTimeoutsMs[ticket.mode];
        const searchingSince = since.get(ticket.id);
        return searchTimeoutMs === undefined || searchingSince === undefined
          ? undefined
          : { to: 'EXPIRED', searchTimeoutMs, searchingSince };
      },
    };
  }
}
