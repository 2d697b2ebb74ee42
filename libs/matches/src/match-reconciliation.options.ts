import type { ReconciliationOptions } from '@matchplane/persistence';

/** The match lifecycle's deadlines and penalties, which its reconciliation stages end matches by. */
export interface MatchReconciliationOptions extends ReconciliationOptions {
  /** For ALLOCATING and PROCESS_READY (ms). */
  readonly allocatingTimeoutMs: number;
  /** For ASSIGNMENT_READY (ms). */
  readonly connectDeadlineMs: number;
  /** For IN_PROGRESS (ms). */
  readonly maxMatchDurationMs: number;
  /** A registered game server silent this long loses its match: FAILED SERVER_LOST (ms). */
  readonly serverHeartbeatTimeoutMs: number;
  /** The cooldown of a match's no-shows when it fails NO_SHOW at the connect deadline. */
  readonly noShowPenalty: {
    readonly baseMs: number;
    readonly capMs: number;
    readonly decayMs: number;
  };
}
