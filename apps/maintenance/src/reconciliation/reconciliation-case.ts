import type { EntityManager } from 'typeorm';
import { sqlStateOf } from '@matchplane/persistence';
import type { NoShowPenaltyPolicy } from '@matchplane/players';

/**
 * What lifecycle reconciliation ends, one case per (state it finds, what it does). Each case is a
 * label of `reconciliation_reconciled_total` and a figure of the pass's log line.
 */
export const RECONCILIATION_CASES = [
  /** SEARCHING, no heartbeat within TICKET_HEARTBEAT_TIMEOUT_MS: EXPIRED. */
  'ticket_heartbeat_timeout',
  /** ALLOCATING past the timeout with no server allocated: FAILED ALLOCATION_FAILED. */
  'allocating_allocation_failed',
  /** ALLOCATING past the timeout, a server allocated that never registered: FAILED SERVER_REGISTRATION_TIMEOUT. */
  'allocating_registration_timeout',
  /** PROCESS_READY past the timeout: FAILED SERVER_REGISTRATION_TIMEOUT. */
  'process_ready_registration_timeout',
  /** ASSIGNMENT_READY past the connect deadline, no initial-connect report: FAILED NO_SHOW. */
  'assignment_ready_no_show',
  /** ASSIGNMENT_READY past the connect deadline although someone's connect was recorded: FAILED LIFECYCLE_TIMEOUT. */
  'assignment_ready_lifecycle_timeout',
  /** IN_PROGRESS past the maximum duration: FAILED LIFECYCLE_TIMEOUT. */
  'in_progress_lifecycle_timeout',
  /** A live allocation whose match has ended: released at the provider by the releaser itself. */
  'allocation_released',
  /** A live allocation whose match has ended: its release handed to the allocator (a new request). */
  'allocation_release_requested',
] as const;
export type ReconciliationCase = (typeof RECONCILIATION_CASES)[number];

/** The units a pass takes turns over; a stage that fails stops for the pass, the others go on. */
export const RECONCILIATION_STAGES = [
  'expired_tickets',
  'allocating_matches',
  'process_ready_matches',
  'assignment_ready_matches',
  'in_progress_matches',
  'finished_allocations',
] as const;
export type ReconciliationStageName = (typeof RECONCILIATION_STAGES)[number];

export interface ReconciliationOptions {
  /** Items one batch takes at most. */
  batchSize: number;
  /** No batch starts after this long into a pass (ms). */
  passBudgetMs: number;
  heartbeatTimeoutMs: number;
  /** For ALLOCATING and PROCESS_READY (ms). */
  allocatingTimeoutMs: number;
  /** For ASSIGNMENT_READY (ms). */
  connectDeadlineMs: number;
  /** For IN_PROGRESS (ms). */
  maxMatchDurationMs: number;
  /** The cooldown of a match's no-shows when it fails NO_SHOW at the connect deadline. */
  noShowPenalty: NoShowPenaltyPolicy;
}

/** One item a batch took but could not end; it is left alone for the rest of the pass. */
export interface ItemFailure {
  id: string;
  sqlState: string | undefined;
  message: string;
}

export interface StageBatch {
  /** Items ended, by case. */
  reconciled: Partial<Record<ReconciliationCase, number>>;
  /** Items the batch took (ended or failed); fewer than the batch size: nothing is left. */
  taken: number;
  failures: ItemFailure[];
}

/** One kind of work a pass does in bounded batches. */
export interface ReconciliationStage {
  readonly name: ReconciliationStageName;
  /** One batch at `now`, leaving the ids in `skip` alone (they failed earlier in the pass). */
  batch(now: Date, skip: ReadonlySet<string>): Promise<StageBatch>;
}

/**
 * Reconciliation never queues behind live traffic for long: a lock it cannot take within this
 * (a ticket a heartbeat is writing, say) fails that item or batch, which the next pass retries.
 */
const LOCK_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 30_000;

export async function boundTransaction(manager: EntityManager): Promise<void> {
  await manager.query(
    `SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true)`,
    [`${LOCK_TIMEOUT_MS}ms`, `${STATEMENT_TIMEOUT_MS}ms`],
  );
}

export function itemFailure(id: string, error: unknown): ItemFailure {
  return {
    id,
    sqlState: sqlStateOf(error),
    message: error instanceof Error ? error.message || error.name : String(error),
  };
}

export function cutoff(now: Date, ageMs: number): Date {
  return new Date(now.getTime() - ageMs);
}
