import type { ReconciliationOptions } from '@matchplane/persistence';

/** The tickets' deadlines, which their reconciliation stages end searching tickets by. */
export interface TicketReconciliationOptions extends ReconciliationOptions {
  /** A searching ticket without a heartbeat this long expires (ms). */
  readonly heartbeatTimeoutMs: number;
  /** Each mode's search timeout (ms), QUEUE_SEARCH_TIMEOUTS; a mode not listed has none. */
  readonly searchTimeoutsMs: Readonly<Record<string, number>>;
}
