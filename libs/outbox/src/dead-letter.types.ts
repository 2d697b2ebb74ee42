/** What the operator's dead-letter routes read and answer, and their limits. */
import type { OutboxRow } from './outbox.row';

export const DEAD_LETTER_DEFAULT_LIMIT = 50;
export const DEAD_LETTER_MAX_LIMIT = 500;
/** Bulk replays commit in batches of about this many rows, each with its audit rows, so no transaction grows with the backlog. */
export const DEAD_LETTER_REPLAY_BATCH = 500;
export const DEAD_LETTER_REASON_MAX_LENGTH = 2_000;

/** How replays and discards appear in audit_log. */
export const DEAD_LETTER_AUDIT = {
  targetType: 'outbox',
  replayed: 'outbox.dead_letter.replayed',
  discarded: 'outbox.dead_letter.discarded',
} as const;

export interface DeadLetterFilter {
  event?: string;
  aggregateId?: string;
  /** dead_lettered_at >= from */
  from?: Date;
  /** dead_lettered_at < to */
  to?: Date;
}

/** A bulk replay's selection: a non-empty filter, or `all: true` on its own. */
export type DeadLetterSelection = DeadLetterFilter & { all?: boolean };

export interface DeadLetterSummary {
  /** The outbox row id, which is also the event id consumers see again on replay (int8, as a string). */
  id: string;
  event: string;
  aggregateType: string;
  aggregateId: string;
  revision: number;
  occurredAt: Date;
  attempts: number;
  lastError: string | null;
  deadLetteredAt: Date;
}

export interface DeadLetterPage {
  items: DeadLetterSummary[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  error: string;
  attemptedAt: Date;
}

export interface DeadLetterDetail extends DeadLetterSummary {
  playerIds: string[];
  payload: Record<string, unknown>;
  createdAt: Date;
  /** Every recorded delivery failure of this row, oldest first (earlier lives before a replay included). */
  history: DeliveryAttempt[];
}

/** Any outbox row as the operator console shows it: a dead letter, or one replayed and pending or delivered again. */
export interface OutboxEventDetail extends Omit<DeadLetterDetail, 'deadLetteredAt'> {
  status: OutboxRow['status'];
  deadLetteredAt: Date | null;
  publishedAt: Date | null;
  nextAttemptAt: Date;
}

export interface ReplayedDeadLetter {
  id: string;
  event: string;
  aggregateType: string;
  aggregateId: string;
  revision: number;
  status: 'pending';
}

export interface BulkReplayResult {
  replayed: number;
}

export interface DiscardedDeadLetter {
  id: string;
  event: string;
  aggregateType: string;
  aggregateId: string;
  revision: number;
  discarded: true;
}
