import type { DataSource } from 'typeorm';
import { DomainError } from '@matchplane/domain';
import {
  boundTransaction,
  itemFailure,
  runInTransaction,
  type ItemFailure,
  type ReconciliationStage,
  type StageBatch,
} from '@matchplane/persistence';
import type { CandidateProjection } from './candidate.projection';
import type { StoredTicket, TicketStore } from './ticket.store';

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
export class SearchTimeoutStage implements ReconciliationStage {
  readonly name = 'search_timeouts';
  readonly cases = ['ticket_search_timeout'] as const;
  /** Beside heartbeat expiry: both end searching tickets before any match stage runs. */
  readonly order = 11;

  constructor(
    private readonly dataSource: DataSource,
    private readonly tickets: TicketStore,
    private readonly projection: CandidateProjection,
    private readonly options: {
      batchSize: number;
      searchTimeoutsMs: Readonly<Record<string, number>>;
    },
  ) {}

  async batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    const timeouts = Object.entries(this.options.searchTimeoutsMs);
    if (timeouts.length === 0)
      return { reconciled: { ticket_search_timeout: 0 }, taken: 0, failures: [] };
    const { ended, taken, failures } = await runInTransaction(this.dataSource, async (manager) => {
      await boundTransaction(manager);
      const rows = await manager.query<{ id: string; created_at: Date }[]>(TIMED_OUT_TICKETS_SQL, [
        timeouts.map(([mode]) => mode),
        timeouts.map(([, ms]) => ms),
        now,
        [...skip],
        this.options.batchSize,
      ]);
      const done: StoredTicket[] = [];
      const refused: ItemFailure[] = [];
      for (const { id, created_at: searchingSince } of rows) {
        const current = await this.tickets.load(manager, id);
        const timeoutMs = current && this.options.searchTimeoutsMs[current.mode];
        if (!current || current.state !== 'SEARCHING' || timeoutMs === undefined) continue;
        try {
          const tickets = await this.tickets.endWithParty(
            manager,
            current,
            { to: 'EXPIRED', searchTimeoutMs: timeoutMs, searchingSince },
            { to: 'EXPIRED', reason: 'SEARCH_TIMED_OUT' },
            now,
          );
          for (const ticket of tickets) {
            await this.projection.refreshAfterCommit(manager, ticket);
            done.push(ticket);
          }
        } catch (error) {
          // The domain refuses before any SQL is sent, so the batch's transaction is still good.
          if (!(error instanceof DomainError)) throw error;
          refused.push(itemFailure(id, error));
        }
      }
      return { ended: done, taken: rows.length, failures: refused };
    });
    return { reconciled: { ticket_search_timeout: ended.length }, taken, failures };
  }
}
