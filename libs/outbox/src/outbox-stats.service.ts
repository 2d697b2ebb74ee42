import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** How many blocked aggregates {@link OutboxStats} lists by name, most events waiting first. */
export const BLOCKED_AGGREGATES_LISTED = 20;

export interface BlockedAggregate {
  aggregateType: string;
  aggregateId: string;
  /** The failing head: the aggregate's lowest pending revision, with attempts > 0. */
  headId: string;
  headEvent: string;
  headRevision: number;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date;
  /** Pending events of this aggregate queued behind the head. */
  waiting: number;
}

export interface EventDelivery {
  id: string;
  revision: number;
  status: 'pending' | 'published' | 'dead';
  attempts: number;
  publishedAt: Date | null;
}

export interface OutboxStats {
  pending: {
    count: number;
    /** Seconds since the oldest pending row was written; null when nothing is pending. */
    oldestAgeSeconds: number | null;
  };
  deadLetters: {
    count: number;
    byEvent: { event: string; count: number }[];
  };
  blockedAggregates: {
    count: number;
    /** Pending events behind every blocked head together. */
    waitingBehind: number;
    top: BlockedAggregate[];
  };
}

/**
 * Backlog figures for operators and metrics. An aggregate is blocked when its head (the one row the
 * relay may deliver next) has already failed: nothing behind it moves until it is delivered or
 * dead-lettered.
 */
@Injectable()
export class OutboxStatsService {
  constructor(private readonly dataSource: DataSource) {}

  /** Where each retained event of one aggregate stands in delivery, by revision (outbox_aggregate_revision_key). */
  async deliveriesOf(aggregateType: string, aggregateId: string): Promise<EventDelivery[]> {
    const rows = await this.dataSource.query<
      {
        id: string;
        revision: string;
        status: EventDelivery['status'];
        attempts: number;
        published_at: Date | null;
      }[]
    >(
      `SELECT id, revision, status, attempts, published_at FROM outbox
        WHERE aggregate_type = $1 AND aggregate_id = $2 ORDER BY revision`,
      [aggregateType, aggregateId],
    );
    return rows.map((row) => ({
      id: row.id,
      revision: Number(row.revision),
      status: row.status,
      attempts: row.attempts,
      publishedAt: row.published_at,
    }));
  }

  /** Rows delivered (acked) in the last `seconds`, over outbox_published_at_idx: the recent delivery rate. */
  async deliveredWithin(seconds: number): Promise<number> {
    const [row] = await this.dataSource.query<{ count: string }[]>(
      `SELECT count(*) AS count FROM outbox
        WHERE status = 'published' AND published_at >= now() - make_interval(secs => $1)`,
      [seconds],
    );
    return Number(row?.count ?? 0);
  }

  async stats(): Promise<OutboxStats> {
    // One snapshot, so the figures agree with each other.
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const [pending] = await manager.query<{ count: string; oldest_age_seconds: string | null }[]>(
        `SELECT count(*) AS count, extract(epoch FROM now() - min(created_at)) AS oldest_age_seconds
           FROM outbox WHERE status = 'pending'`,
      );
      const dead = await manager.query<{ event: string; count: string }[]>(
        `SELECT event, count(*) AS count FROM outbox WHERE status = 'dead' GROUP BY event ORDER BY count(*) DESC, event`,
      );
      const blocked = await manager.query<
        {
          aggregate_type: string;
          aggregate_id: string;
          id: string;
          event: string;
          revision: string;
          attempts: number;
          last_error: string | null;
          next_attempt_at: Date;
          waiting: string;
          blocked_count: string;
          waiting_total: string;
        }[]
      >(
        // The same DISTINCT ON head scan as the relay's claim (over outbox_pending_head).
        `WITH heads AS (
           SELECT DISTINCT ON (aggregate_id) id, aggregate_type, aggregate_id, event, revision, attempts, last_error, next_attempt_at
             FROM outbox
            WHERE status = 'pending'
            ORDER BY aggregate_id, revision
         ), blocked AS (
           SELECT h.*,
                  (SELECT count(*) FROM outbox o
                    WHERE o.aggregate_id = h.aggregate_id AND o.status = 'pending' AND o.revision > h.revision) AS waiting
             FROM heads h
            WHERE h.attempts > 0
         )
         SELECT *, count(*) OVER () AS blocked_count, sum(waiting) OVER () AS waiting_total
           FROM blocked
          ORDER BY waiting DESC, aggregate_id
          LIMIT $1`,
        [BLOCKED_AGGREGATES_LISTED],
      );
      const age = pending?.oldest_age_seconds;
      return {
        pending: {
          count: Number(pending?.count ?? 0),
          oldestAgeSeconds: age == null ? null : Number(age),
        },
        deadLetters: {
          count: dead.reduce((total, row) => total + Number(row.count), 0),
          byEvent: dead.map((row) => ({ event: row.event, count: Number(row.count) })),
        },
        blockedAggregates: {
          count: Number(blocked[0]?.blocked_count ?? 0),
          waitingBehind: Number(blocked[0]?.waiting_total ?? 0),
          top: blocked.map((row) => ({
            aggregateType: row.aggregate_type,
            aggregateId: row.aggregate_id,
            headId: row.id,
            headEvent: row.event,
            headRevision: Number(row.revision),
            attempts: row.attempts,
            lastError: row.last_error,
            nextAttemptAt: row.next_attempt_at,
            waiting: Number(row.waiting),
          })),
        },
      };
    });
  }
}
