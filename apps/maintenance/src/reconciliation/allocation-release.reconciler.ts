import type { DataSource } from 'typeorm';
import type { MatchState } from '@matchplane/domain';
import { runInTransaction } from '@matchplane/persistence';
import type { AllocationReleaser, FinishedMatchAllocation } from './allocation.releaser';
import {
  boundTransaction,
  itemFailure,
  type ReconciliationStage,
  type StageBatch,
} from './reconciliation-case';

/**
 * Live allocations whose match has ended, oldest ending first: a bounded read without locks.
 * Live allocations are few (one per live match at most, plus these) and the partial unique index
 * allocations_live_server_id_key holds exactly them; each one's match is then looked up by key
 * (a correlated subquery, so the planner cannot turn it into a scan of the weeks of finished
 * matches kept for retention). finished_at is set exactly when a match is terminal (CHECK
 * matches_finished_iff_terminal). A match cannot be gone while its allocation is there:
 * allocations.match_id cascades, and retention keeps a match whose allocation is live.
 * `$1` = the batch size, `$2` = ids to leave alone.
 */
export const FINISHED_ALLOCATIONS_SQL = `SELECT live.match_id
  FROM (SELECT a.match_id,
               (SELECT m.finished_at FROM matches m WHERE m.id = a.match_id) AS finished_at
          FROM allocations a
         WHERE a.state IN ('REQUESTED', 'ALLOCATED')
           AND a.match_id <> ALL ($2::uuid[])) live
 WHERE live.finished_at IS NOT NULL
 ORDER BY live.finished_at, live.match_id
 LIMIT $1`;

/**
 * One of them, locked and re-checked: SKIP LOCKED, so of two replicas walking the same list each
 * allocation is released by the one that locked it; the other skips it, or finds it released.
 */
export const CLAIM_FINISHED_ALLOCATION_SQL = `SELECT a.match_id, a.provider, a.server_id, a.endpoint,
       a.provider_ref, a.state, m.state AS match_state
  FROM allocations a
  JOIN matches m ON m.id = a.match_id
 WHERE a.match_id = $1
   AND a.state IN ('REQUESTED', 'ALLOCATED')
   AND m.state IN ('COMPLETED', 'FAILED', 'CANCELLED')
   FOR UPDATE OF a SKIP LOCKED`;

interface AllocationRow {
  match_id: string;
  provider: string;
  server_id: string;
  endpoint: string | null;
  provider_ref: Record<string, unknown>;
  state: 'REQUESTED' | 'ALLOCATED';
  match_state: MatchState;
}

/**
 * Gives the servers of ended matches back through the {@link AllocationReleaser} port, one short
 * transaction per allocation (the provider's answer decides that one row only). A release handed
 * on (to the allocator) keeps the row live until it is done, so an allocation whose release failed
 * is found, and asked for, again at the next pass.
 */
export class AllocationReleaseReconciler implements ReconciliationStage {
  readonly name = 'finished_allocations';

  constructor(
    private readonly dataSource: DataSource,
    private readonly releaser: AllocationReleaser,
    private readonly options: { batchSize: number },
  ) {}

  async batch(_now: Date, skip: ReadonlySet<string>): Promise<StageBatch> {
    const candidates = await this.dataSource.query<{ match_id: string }[]>(
      FINISHED_ALLOCATIONS_SQL,
      [this.options.batchSize, [...skip]],
    );
    const result: StageBatch = { reconciled: {}, taken: candidates.length, failures: [] };
    const outcomes = { released: 0, requested: 0 };
    for (const { match_id: matchId } of candidates) {
      try {
        const outcome = await runInTransaction(this.dataSource, async (manager) => {
          await boundTransaction(manager);
          const [row] = await manager.query<AllocationRow[]>(CLAIM_FINISHED_ALLOCATION_SQL, [
            matchId,
          ]);
          return row ? this.releaser.release(toAllocation(row), manager) : undefined;
        });
        if (outcome === 'released' || outcome === 'requested') outcomes[outcome] += 1;
      } catch (error) {
        result.failures.push(itemFailure(matchId, error));
      }
    }
    result.reconciled.allocation_released = outcomes.released;
    result.reconciled.allocation_release_requested = outcomes.requested;
    return result;
  }
}

function toAllocation(row: AllocationRow): FinishedMatchAllocation {
  return {
    matchId: row.match_id,
    provider: row.provider,
    serverId: row.server_id,
    endpoint: row.endpoint,
    providerRef: row.provider_ref,
    state: row.state,
    matchState: row.match_state,
  };
}
