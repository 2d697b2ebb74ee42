import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import {
  AuditWriter,
  decodeCursor,
  keysetPage,
  returnedRows,
  runInTransaction,
} from '@matchplane/persistence';
import { OUTBOX_COLUMNS, type OutboxRow } from './outbox.row';
import { OutboxSignal } from './outbox.signal';

import {
  DEAD_LETTER_AUDIT,
  DEAD_LETTER_DEFAULT_LIMIT,
  DEAD_LETTER_MAX_LIMIT,
  DEAD_LETTER_REPLAY_BATCH,
  type BulkReplayResult,
  type DeadLetterDetail,
  type DeadLetterFilter,
  type DeadLetterPage,
  type DeadLetterSelection,
  type DeliveryAttempt,
  type DiscardedDeadLetter,
  type OutboxEventDetail,
  type ReplayedDeadLetter,
} from './dead-letter.types';
import {
  aggregateAlignedBatches,
  assertActor,
  assertFilter,
  assertId,
  CURSOR_INSTANT_SQL,
  detailOf,
  filterConditions,
  identityOf,
  invalid,
  isOutboxId,
  normalizedReason,
  notFound,
  replayAudit,
  summaryOf,
  type SummaryRow,
} from './dead-letter.rows';

export * from './dead-letter.types';
export { isOutboxId } from './dead-letter.rows';

/**
 * The operator's view of the dead letters (`status = 'dead'` rows of the outbox): list, inspect,
 * replay and discard. A replay puts the same row (same id, same revision) back to pending, so
 * consumers dedupe it like any redelivery; since the relay only ever claims an aggregate's lowest
 * pending revision, a replayed row goes out before that aggregate's later pending events. Every
 * replay and discard writes its audit row in the transaction that makes the change.
 */
@Injectable()
export class DeadLetterService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditWriter,
    private readonly signal: OutboxSignal,
  ) {}

  /** Oldest dead letter first, keyset-paginated on (dead_lettered_at, id). */
  async list(
    filter: DeadLetterFilter,
    cursor?: string,
    limit = DEAD_LETTER_DEFAULT_LIMIT,
  ): Promise<DeadLetterPage> {
    assertFilter(filter);
    if (!Number.isInteger(limit) || limit < 1 || limit > DEAD_LETTER_MAX_LIMIT) {
      throw invalid('limit', `limit must be an integer from 1 to ${DEAD_LETTER_MAX_LIMIT}`);
    }
    const params: unknown[] = [];
    const conditions = filterConditions(filter, params);
    if (cursor !== undefined) {
      const after = decodeCursor(cursor, isOutboxId);
      params.push(after.at, after.id);
      const at = `$${params.length - 1}::timestamptz`;
      // The plain range lets the dead_lettered_at index bound the scan; the row comparison breaks ties.
      conditions.push(
        `dead_lettered_at >= ${at}`,
        `(dead_lettered_at, id) > (${at}, $${params.length}::bigint)`,
      );
    }
    params.push(limit + 1);
    const rows = await this.dataSource.query<(SummaryRow & { cursor_at: string })[]>(
      `SELECT id, event, aggregate_type, aggregate_id, revision, occurred_at, attempts, last_error, dead_lettered_at,
              ${CURSOR_INSTANT_SQL} AS cursor_at
         FROM outbox
        WHERE ${conditions.join(' AND ')}
        ORDER BY dead_lettered_at, id
        LIMIT $${params.length}`,
      params,
    );
    return keysetPage(rows, limit, summaryOf);
  }

  async show(id: string): Promise<DeadLetterDetail> {
    assertId(id);
    const [row] = await this.dataSource.query<OutboxRow[]>(
      `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE id = $1 AND status = 'dead'`,
      [id],
    );
    if (!row) throw notFound(id);
    return { ...detailOf(row), history: await this.historyOf(this.dataSource.manager, id) };
  }

  /** Whatever state the row is in now (a replayed row is followed to its delivery), with its history. */
  async inspect(id: string): Promise<OutboxEventDetail> {
    assertId(id);
    const [row] = await this.dataSource.query<OutboxRow[]>(
      `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE id = $1`,
      [id],
    );
    if (!row) throw notFound(id);
    return {
      ...summaryOf({ ...row, dead_lettered_at: row.dead_lettered_at as Date }),
      playerIds: row.player_ids,
      payload: row.payload,
      createdAt: row.created_at,
      status: row.status,
      deadLetteredAt: row.dead_lettered_at,
      publishedAt: row.published_at,
      nextAttemptAt: row.next_attempt_at,
      history: await this.historyOf(this.dataSource.manager, id),
    };
  }

  /** Back to pending with the same id; attempts start again from 0 and it is due at once. */
  async replay(id: string, actor: string, reason?: string): Promise<ReplayedDeadLetter> {
    assertId(id);
    assertActor(actor);
    const why = normalizedReason(reason, false);
    const replayed = await runInTransaction(this.dataSource, async (manager, unit) => {
      const row = await this.lockDead(manager, id);
      await manager.query(
        `UPDATE outbox
            SET status = 'pending', attempts = 0, claimed_at = NULL, claim_token = NULL, claimed_by = NULL,
                next_attempt_at = now(), dead_lettered_at = NULL
          WHERE id = $1`,
        [id],
      );
      await this.audit.record(manager, replayAudit(row, actor, why));
      this.signal.wakeAfter(unit);
      return row;
    });
    return { ...identityOf(replayed), status: 'pending' };
  }

  /**
   * Replays every dead letter the selection matched when the call began (a replayed row that fails
   * for good again is not picked up a second time). Commits in batches of about
   * {@link DEAD_LETTER_REPLAY_BATCH} rows, never splitting an aggregate's rows across two, so
   * the relay sees an aggregate's replayed revisions become pending together and delivers them in
   * order. Rows another operator is replaying or discarding at that moment are left to them.
   */
  async replayMatching(
    selection: DeadLetterSelection,
    actor: string,
    reason: string,
  ): Promise<BulkReplayResult> {
    const { all, ...filter } = selection;
    assertFilter(filter);
    const empty = Object.values(filter).every((value) => value === undefined);
    if (all === true && !empty) {
      throw invalid('all', '`all` replays every dead letter and cannot be combined with a filter');
    }
    if (all !== true && empty) {
      throw invalid(
        'all',
        'a bulk replay needs a filter (event, aggregateId, from, to), or `all: true` to replay every dead letter',
      );
    }
    assertActor(actor);
    const why = normalizedReason(reason, true);
    const params: unknown[] = [];
    const matched = await this.dataSource.query<{ id: string; aggregate_id: string }[]>(
      `SELECT id, aggregate_id FROM outbox WHERE ${filterConditions(filter, params).join(' AND ')}
        ORDER BY aggregate_id, revision`,
      params,
    );
    let replayed = 0;
    for (const ids of aggregateAlignedBatches(matched, DEAD_LETTER_REPLAY_BATCH)) {
      replayed += await runInTransaction(this.dataSource, async (manager, unit) => {
        const result: unknown = await manager.query(
          `WITH picked AS (
             SELECT id, attempts, dead_lettered_at FROM outbox
              WHERE id = ANY($1::bigint[]) AND status = 'dead'
                FOR UPDATE SKIP LOCKED
           )
           UPDATE outbox o
              SET status = 'pending', attempts = 0, claimed_at = NULL, claim_token = NULL, claimed_by = NULL,
                  next_attempt_at = now(), dead_lettered_at = NULL
             FROM picked
            WHERE o.id = picked.id
           RETURNING o.id, o.event, o.aggregate_type, o.aggregate_id, o.revision, o.occurred_at, o.last_error,
                     picked.attempts, picked.dead_lettered_at`,
          [ids],
        );
        const rows = returnedRows<SummaryRow>(result);
        await this.audit.recordMany(
          manager,
          rows.map((row) =>
            replayAudit(row, actor, why, { filter: all === true ? 'all' : filter }),
          ),
        );
        this.signal.wakeAfter(unit);
        return rows.length;
      });
    }
    return { replayed };
  }

  /** Deletes the dead letter and its attempt history; the audit row keeps the whole envelope. */
  async discard(id: string, actor: string, reason: string): Promise<DiscardedDeadLetter> {
    assertId(id);
    assertActor(actor);
    const why = normalizedReason(reason, true);
    const discarded = await runInTransaction(this.dataSource, async (manager) => {
      const row = await this.lockDead(manager, id);
      const history = await this.historyOf(manager, id);
      await manager.query(`DELETE FROM outbox WHERE id = $1`, [id]);
      await this.audit.record(manager, {
        actor,
        action: DEAD_LETTER_AUDIT.discarded,
        targetType: DEAD_LETTER_AUDIT.targetType,
        targetId: id,
        reason: why,
        details: {
          envelope: {
            event: row.event,
            aggregateType: row.aggregate_type,
            aggregateId: row.aggregate_id,
            revision: Number(row.revision),
            occurredAt: row.occurred_at.toISOString(),
            playerIds: row.player_ids,
            payload: row.payload,
          },
          attempts: row.attempts,
          lastError: row.last_error,
          deadLetteredAt: row.dead_lettered_at?.toISOString() ?? null,
          createdAt: row.created_at.toISOString(),
          history: history.map((entry) => ({
            ...entry,
            attemptedAt: entry.attemptedAt.toISOString(),
          })),
        },
      });
      return row;
    });
    return { ...identityOf(discarded), discarded: true };
  }

  /** Locks the row for the rest of the transaction; a row that is not dead cannot be replayed or discarded. */
  private async lockDead(manager: EntityManager, id: string): Promise<OutboxRow> {
    const [row] = await manager.query<OutboxRow[]>(
      `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE id = $1 FOR UPDATE`,
      [id],
    );
    if (!row) throw notFound(id);
    if (row.status !== 'dead') {
      throw new CodedError(
        ErrorCode.NOT_DEAD_LETTERED,
        `Outbox row ${id} is ${row.status}, not dead-lettered (already replayed?); only dead letters can be replayed or discarded`,
      );
    }
    return row;
  }

  private async historyOf(manager: EntityManager, id: string): Promise<DeliveryAttempt[]> {
    const rows = await manager.query<{ attempt: number; error: string; attempted_at: Date }[]>(
      `SELECT attempt, error, attempted_at FROM outbox_delivery_attempts WHERE outbox_id = $1 ORDER BY attempted_at, id`,
      [id],
    );
    return rows.map((row) => ({
      attempt: row.attempt,
      error: row.error,
      attemptedAt: row.attempted_at,
    }));
  }
}
