import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { cursorInstantSql, type AuditEntry } from '@matchplane/persistence';
import type { OutboxRow } from './outbox.row';
import {
  DEAD_LETTER_AUDIT,
  DEAD_LETTER_REASON_MAX_LENGTH,
  type DeadLetterDetail,
  type DeadLetterFilter,
  type DeadLetterSummary,
} from './dead-letter.types';

/** Dead-letter rows into answers, and the checks on an operator's input. */
const OUTBOX_ID = /^[1-9][0-9]{0,18}$/;
const INT8_MAX = 9_223_372_036_854_775_807n;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The cursor keeps PostgreSQL's microseconds: a millisecond Date would skip or repeat rows at a page edge. */
export const CURSOR_INSTANT_SQL = cursorInstantSql('dead_lettered_at');

/** Whether `value` can be an outbox id (a positive int8 in decimal). */
export function isOutboxId(value: string): boolean {
  return OUTBOX_ID.test(value) && BigInt(value) <= INT8_MAX;
}

/** A dead row's summary columns (dead, so its dead_lettered_at is set). */
export interface SummaryRow extends Pick<
  OutboxRow,
  | 'id'
  | 'event'
  | 'aggregate_type'
  | 'aggregate_id'
  | 'revision'
  | 'occurred_at'
  | 'attempts'
  | 'last_error'
> {
  dead_lettered_at: Date;
}

/** Consecutive ids in batches of at least `size`, cut only where the aggregate changes. */
export function aggregateAlignedBatches(
  rows: { id: string; aggregate_id: string }[],
  size: number,
): string[][] {
  const batches: string[][] = [];
  let current: string[] = [];
  rows.forEach((row, index) => {
    current.push(row.id);
    const next = rows[index + 1];
    if (!next || (current.length >= size && next.aggregate_id !== row.aggregate_id)) {
      batches.push(current);
      current = [];
    }
  });
  return batches;
}

export function filterConditions(filter: DeadLetterFilter, params: unknown[]): string[] {
  const conditions = [`status = 'dead'`];
  const add = (sql: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(sql(`$${params.length}`));
  };
  if (filter.event !== undefined) add((p) => `event = ${p}`, filter.event);
  if (filter.aggregateId !== undefined) add((p) => `aggregate_id = ${p}::uuid`, filter.aggregateId);
  if (filter.from !== undefined) add((p) => `dead_lettered_at >= ${p}::timestamptz`, filter.from);
  if (filter.to !== undefined) add((p) => `dead_lettered_at < ${p}::timestamptz`, filter.to);
  return conditions;
}

export function summaryOf(row: SummaryRow): DeadLetterSummary {
  return {
    ...identityOf(row),
    occurredAt: row.occurred_at,
    attempts: row.attempts,
    lastError: row.last_error,
    deadLetteredAt: row.dead_lettered_at,
  };
}

export function detailOf(row: OutboxRow): Omit<DeadLetterDetail, 'history'> {
  return {
    // outbox_dead_has_time: a dead row always has its dead_lettered_at.
    ...summaryOf({ ...row, dead_lettered_at: row.dead_lettered_at as Date }),
    playerIds: row.player_ids,
    payload: row.payload,
    createdAt: row.created_at,
  };
}

export function identityOf(
  row: Pick<SummaryRow, 'id' | 'event' | 'aggregate_type' | 'aggregate_id' | 'revision'>,
) {
  return {
    id: row.id,
    event: row.event,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    revision: Number(row.revision),
  };
}

export function replayAudit(
  row: Pick<
    SummaryRow,
    'id' | 'event' | 'aggregate_type' | 'aggregate_id' | 'revision' | 'attempts' | 'last_error'
  > & {
    dead_lettered_at: Date | null;
  },
  actor: string,
  reason: string | null,
  bulk?: { filter: DeadLetterFilter | 'all' },
): AuditEntry {
  return {
    actor,
    action: DEAD_LETTER_AUDIT.replayed,
    targetType: DEAD_LETTER_AUDIT.targetType,
    targetId: row.id,
    reason,
    details: {
      event: row.event,
      aggregateType: row.aggregate_type,
      aggregateId: row.aggregate_id,
      revision: Number(row.revision),
      previousAttempts: row.attempts,
      lastError: row.last_error,
      deadLetteredAt: row.dead_lettered_at?.toISOString() ?? null,
      ...(bulk ? { bulk } : {}),
    },
  };
}

export function invalid(field: string, message: string): CodedError {
  return new CodedError(ErrorCode.VALIDATION_FAILED, message, {
    errors: [{ field, problems: [message] }],
  });
}

export function notFound(id: string): CodedError {
  return new CodedError(ErrorCode.DEAD_LETTER_NOT_FOUND, `No dead letter with id ${id}`);
}

export function assertId(id: string): void {
  if (!isOutboxId(id))
    throw invalid('id', `id must be a positive integer outbox id (got "${id.slice(0, 40)}")`);
}

export function assertActor(actor: string): void {
  if (actor.trim() === '') throw invalid('actor', 'the acting operator must be named');
}

export function assertFilter(filter: DeadLetterFilter): void {
  if (filter.event !== undefined && filter.event.trim() === '')
    throw invalid('event', 'event must not be empty');
  if (filter.aggregateId !== undefined && !UUID.test(filter.aggregateId))
    throw invalid('aggregateId', 'aggregateId must be a UUID');
  for (const field of ['from', 'to'] as const) {
    const value = filter[field];
    if (value !== undefined && Number.isNaN(value.getTime()))
      throw invalid(field, `${field} must be a valid instant`);
  }
  if (filter.from && filter.to && filter.from > filter.to)
    throw invalid('from', 'from must not be later than to');
}

export function normalizedReason(reason: string | undefined, required: boolean): string | null {
  const trimmed = reason?.trim() ?? '';
  if (required && trimmed === '') throw invalid('reason', 'a reason is required');
  if (trimmed.length > DEAD_LETTER_REASON_MAX_LENGTH) {
    throw invalid('reason', `reason must be at most ${DEAD_LETTER_REASON_MAX_LENGTH} characters`);
  }
  return trimmed === '' ? null : trimmed;
}
