import type { DataSource } from 'typeorm';
import { RowsEndedOneByOneStage, type UnitOfWork } from '@matchplane/persistence';
import type { MatchReconciliationOptions } from './match-reconciliation.options';
import type { MatchLifecycle } from './match-lifecycle.service';
import type { ReadyCheck } from './ready-check.service';

/**
 * Matches whose ready check is past its deadline, oldest deadline first, `skip` left alone; the
 * live-state index (state, state_changed_at) narrows them to the few AWAITING_ACCEPTANCE.
 */
const OVERDUE_READY_CHECKS_SQL = `SELECT m.id
  FROM matches m
 WHERE m.state = 'AWAITING_ACCEPTANCE'
   AND m.acceptance_deadline <= $1::timestamptz
   AND m.id <> ALL ($2::uuid[])
 ORDER BY m.acceptance_deadline
 LIMIT 1
   FOR UPDATE OF m SKIP LOCKED`;

/**
 * Cancels matches whose players did not all accept before the deadline (ACCEPTANCE_TIMEOUT), one
 * short transaction per match through ReadyCheck.expire: those who accepted search again with
 * their enqueue time, the others' tickets end FAILED ACCEPTANCE_TIMEOUT with the no-show cooldown.
 */
export class AcceptanceTimeoutStage extends RowsEndedOneByOneStage<{ id: string }> {
  protected readonly claimSql = OVERDUE_READY_CHECKS_SQL;

  constructor(
    dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly readyCheck: ReadyCheck,
    private readonly options: Pick<MatchReconciliationOptions, 'batchSize' | 'noShowPenalty'>,
  ) {
    // Before the ALLOCATING rule (20): a match that never left its ready check is no allocation's.
    super('acceptance_timeouts', 'ready_check_timeout', 19, dataSource, options.batchSize);
  }

  protected keyOf(row: { id: string }): string {
    return row.id;
  }

  protected async end(unit: UnitOfWork, row: { id: string }, now: Date): Promise<void> {
    const match = await this.lifecycle.matches.load(unit.manager, row.id);
    if (match?.state !== 'AWAITING_ACCEPTANCE') return;
    await this.readyCheck.expire(unit, match, this.options.noShowPenalty, now);
  }
}
