import type { DataSource } from 'typeorm';
import { cutoff, RowsEndedOneByOneStage, type UnitOfWork } from '@matchplane/persistence';
import type { MatchReconciliationOptions } from './match-reconciliation.options';
import type { MatchLifecycle } from './match-lifecycle.service';

/**
 * Claims the longest-live registered match whose server is silent: every state a registered
 * server's match can be in (registration moves ALLOCATING -> PROCESS_READY -> ASSIGNMENT_READY in
 * one transaction; PROCESS_READY is listed for a match some future step leaves there). `$1` = the
 * cutoff, `$2` = ids to leave alone. SKIP LOCKED, as every reconciliation claim: a match another
 * replica or a live route holds is not waited for, so replicas never fail one match twice.
 * Whether the server is silent is the allocation module's fact (its heartbeats), read through its
 * `live_allocations` view: a registered server that never heartbeated is silent from its
 * registration; one not yet registered (the registration timeout covers it) is not.
 */
export const SILENT_SERVER_MATCH_SQL = `SELECT m.id, m.revision
  FROM matches m
 WHERE m.state IN ('PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS')
   AND EXISTS (SELECT 1 FROM live_allocations l
                WHERE l.match_id = m.id AND l.silent_since < $1::timestamptz)
   AND m.id <> ALL ($2::uuid[])
 ORDER BY m.state_changed_at
 LIMIT 1
   FOR UPDATE OF m SKIP LOCKED`;

/**
 * Server liveness (issue 30): a registered match whose game server missed its heartbeats past
 * SERVER_HEARTBEAT_TIMEOUT_MS is FAILED SERVER_LOST through MatchLifecycle (the state machine,
 * its event to every participant, the tickets ended without penalty and their players given
 * requeue priority), one short transaction per match. The allocation's release follows in the
 * same round (`finished_allocations`, order 90), through the allocator's release path.
 */
export class ServerLossReconciler extends RowsEndedOneByOneStage<{ id: string; revision: string }> {
  static readonly CASE = 'server_lost';
  protected readonly claimSql = SILENT_SERVER_MATCH_SQL;

  constructor(
    dataSource: DataSource,
    private readonly lifecycle: MatchLifecycle,
    private readonly options: MatchReconciliationOptions,
  ) {
    // After the stuck-match rules (20-24), before the releases (90).
    super('silent_servers', ServerLossReconciler.CASE, 25, dataSource, options.batchSize);
  }

  /** Silent: no heartbeat since SERVER_HEARTBEAT_TIMEOUT_MS before `now`. */
  protected override dueBy(now: Date): Date {
    return cutoff(now, this.options.serverHeartbeatTimeoutMs);
  }

  protected keyOf(row: { id: string }): string {
    return row.id;
  }

  protected async end(
    unit: UnitOfWork,
    row: { id: string; revision: string },
    now: Date,
  ): Promise<void> {
    await this.lifecycle.failServerLost(unit, row.id, {
      expectedRevision: Number(row.revision),
      now,
    });
  }
}
