import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RecordedResult } from '@matchplane/domain';

/**
 * The game servers' end-of-match reports, as `AllocationStore.release` recorded them on the
 * allocation (`allocations.reported_result`): for the result route's repeat check and the
 * players' match history.
 */
@Injectable()
export class ReportedResults {
  /** The recorded report of each of `matchIds` that has one. */
  async of(
    manager: EntityManager,
    matchIds: readonly string[],
  ): Promise<Map<string, RecordedResult>> {
    if (matchIds.length === 0) return new Map();
    const rows = await manager.query<{ match_id: string; result: RecordedResult }[]>(
      `SELECT match_id, reported_result AS result FROM allocations
        WHERE match_id = ANY($1::uuid[]) AND reported_result IS NOT NULL`,
      [matchIds],
    );
    return new Map(rows.map((row) => [row.match_id, row.result]));
  }
}
