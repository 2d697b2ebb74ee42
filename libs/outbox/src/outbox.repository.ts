import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OUTBOX_COLUMNS, type OutboxRow } from './outbox.row';

export interface FailureOutcome {
  attempts: number;
  deadLettered: boolean;
}

/**
 * The outbox module's only door to the `outbox` and `outbox_delivery_attempts` tables for the
 * delivery side. Claims are the ordering gate: only the oldest pending row of an aggregate can
 * be claimed, and only while no claim on it is live, so an aggregate has at most one event in
 * flight and its events leave in revision order.
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims up to `limit` aggregate heads that are due and not in flight. A claim older than
   * `leaseMs` is presumed abandoned (its worker died) and may be taken again.
   */
  async claimHeads(limit: number, leaseMs: number): Promise<OutboxRow[]> {
    const result: unknown = await this.dataSource.query(
      `WITH heads AS (
         SELECT DISTINCT ON (aggregate_id) id, aggregate_id, next_attempt_at, claimed_at
           FROM outbox
          WHERE status = 'pending'
          ORDER BY aggregate_id, revision
       ), due AS (
         SELECT id FROM heads
          WHERE next_attempt_at <= now()
            AND (claimed_at IS NULL OR claimed_at < now() - make_interval(secs => $2 / 1000.0))
            -- A replayed dead letter can sit below a row already in flight: never two at once.
            AND NOT EXISTS (
              SELECT 1 FROM outbox live
               WHERE live.aggregate_id = heads.aggregate_id AND live.status = 'pending'
                 AND live.claimed_at >= now() - make_interval(secs => $2 / 1000.0))
          ORDER BY next_attempt_at
          LIMIT $1
       ), locked AS (
         -- Re-checked under the row lock: another relay may have claimed or finished it since.
         SELECT o.id FROM outbox o JOIN due USING (id)
          WHERE o.status = 'pending'
            AND (o.claimed_at IS NULL OR o.claimed_at < now() - make_interval(secs => $2 / 1000.0))
            FOR UPDATE OF o SKIP LOCKED
       )
       UPDATE outbox o SET claimed_at = clock_timestamp()
         FROM locked WHERE o.id = locked.id
       RETURNING ${prefixed('o')}`,
      [limit, leaseMs],
    );
    return returnedRows<OutboxRow>(result);
  }

  /** After an ack: claims the aggregate's next pending row if it is due and unclaimed. */
  async claimNext(aggregateId: string): Promise<OutboxRow | undefined> {
    const result: unknown = await this.dataSource.query(
        `WITH head AS (
           SELECT id, next_attempt_at, claimed_at FROM outbox
            WHERE aggregate_id = $1 AND status = 'pending'
            ORDER BY revision LIMIT 1
         ), locked AS (
           SELECT o.id FROM outbox o JOIN head USING (id)
            WHERE o.status = 'pending' AND o.claimed_at IS NULL AND o.next_attempt_at <= now()
              AND NOT EXISTS (
                SELECT 1 FROM outbox live
                 WHERE live.aggregate_id = $1 AND live.status = 'pending' AND live.claimed_at IS NOT NULL)
              FOR UPDATE OF o SKIP LOCKED
         )
         UPDATE outbox o SET claimed_at = clock_timestamp()
           FROM locked WHERE o.id = locked.id
         RETURNING ${prefixed('o')}`,
        [aggregateId],
      );
    return returnedRows<OutboxRow>(result)[0];
  }

  async findPending(id: string): Promise<OutboxRow | undefined> {
    const rows = await this.dataSource.query<OutboxRow[]>(
      `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE id = $1 AND status = 'pending'`,
      [id],
    );
    return rows[0];
  }

  /** The ack. Returns false when the row was no longer pending (a duplicate delivery). */
  async markPublished(id: string): Promise<boolean> {
    const result: unknown = await this.dataSource.query(
        `UPDATE outbox SET status = 'published', published_at = clock_timestamp(), claimed_at = NULL
          WHERE id = $1 AND status = 'pending' RETURNING id`,
        [id],
      );
    return returnedRows(result).length === 1;
  }

  /**
   * Counts a failed delivery against the row in one short statement: attempts, last error, an
   * attempt-history row, and either a backoff or the dead letter.
   */
  async recordFailure(
    id: string,
    error: string,
    options: { permanent: boolean; maxAttempts: number; retryDelayMs: number },
  ): Promise<FailureOutcome | undefined> {
    const rows = await this.dataSource.query<{ attempts: number; status: string }[]>(
      `WITH failed AS (
         UPDATE outbox
            SET attempts = attempts + 1,
                last_error = $2,
                claimed_at = NULL,
                status = CASE WHEN $3 OR attempts + 1 >= $4 THEN 'dead' ELSE 'pending' END,
                dead_lettered_at = CASE WHEN $3 OR attempts + 1 >= $4 THEN clock_timestamp() END,
                next_attempt_at = clock_timestamp() + make_interval(secs => $5 / 1000.0)
          WHERE id = $1 AND status = 'pending'
          RETURNING id, attempts, status
       ), history AS (
         INSERT INTO outbox_delivery_attempts (outbox_id, attempt, error)
         SELECT id, attempts, $2 FROM failed
       )
       SELECT attempts, status FROM failed`,
      [id, error.slice(0, 4_000), options.permanent, options.maxAttempts, options.retryDelayMs],
    );
    const row = rows[0];
    return row && { attempts: row.attempts, deadLettered: row.status === 'dead' };
  }

  /** Claimed rows older than `minAgeMs`: the auditor checks that each still has its job. */
  async claimedBefore(minAgeMs: number, limit: number): Promise<Pick<OutboxRow, 'id' | 'aggregate_id' | 'claimed_at'>[]> {
    return this.dataSource.query(
      `SELECT id, aggregate_id, claimed_at FROM outbox
        WHERE status = 'pending' AND claimed_at IS NOT NULL
          AND claimed_at < now() - make_interval(secs => $1 / 1000.0)
        ORDER BY claimed_at LIMIT $2`,
      [minAgeMs, limit],
    );
  }
}

function prefixed(alias: string): string {
  return OUTBOX_COLUMNS.split(',')
    .map((column) => `${alias}.${column.trim()}`)
    .join(', ');
}

/** TypeORM's postgres driver returns `[rows, affectedCount]` for UPDATE/DELETE ... RETURNING. */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}
