import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MatchState } from '@matchplane/domain';

/** A live allocation (REQUESTED or ALLOCATED) of a match that has ended, as reconciliation found it. */
export interface FinishedMatchAllocation {
  readonly matchId: string;
  readonly provider: string;
  readonly serverId: string;
  /** Null while REQUESTED: the provider had not answered yet. */
  readonly endpoint: string | null;
  /** The provider's own handle on the server (e.g. an Agones GameServer name). */
  readonly providerRef: Readonly<Record<string, unknown>>;
  readonly state: 'REQUESTED' | 'ALLOCATED';
  readonly matchState: MatchState;
}

/**
 * The port through which reconciliation gives a finished match's server back to its provider.
 * The allocator's providers bind theirs here (`provide: AllocationReleaser, useClass: ...`).
 *
 * `release` runs inside `manager`'s transaction, which holds the allocation row locked (so one
 * replica releases it), and must leave the row RELEASED (or FAILED) in that transaction once the
 * provider has let the server go. It must be idempotent by match id: a release whose transaction
 * then fails to commit is asked again at the next pass.
 */
export abstract class AllocationReleaser {
  abstract release(allocation: FinishedMatchAllocation, manager: EntityManager): Promise<void>;
}

/** Marks the row released in the caller's transaction; the provider side is the caller's part. */
export async function markAllocationReleased(
  manager: EntityManager,
  matchId: string,
): Promise<void> {
  await manager.query(
    `UPDATE allocations SET state = 'RELEASED', released_at = now(), updated_at = now()
      WHERE match_id = $1 AND state IN ('REQUESTED', 'ALLOCATED')`,
    [matchId],
  );
}

/**
 * The default until a provider is bound: the row is marked RELEASED (so the match can be purged
 * and the server id reused) and a warning names the server, which nobody asked the provider to
 * stop; an operator reading it knows what to clean up by hand.
 */
@Injectable()
export class UnwiredAllocationReleaser extends AllocationReleaser {
  private readonly logger = new Logger(AllocationReleaser.name);

  async release(allocation: FinishedMatchAllocation, manager: EntityManager): Promise<void> {
    await markAllocationReleased(manager, allocation.matchId);
    this.logger.warn(
      `no allocation provider is wired to release servers: allocation of match ${allocation.matchId}` +
        ` (provider ${allocation.provider}, server ${allocation.serverId}) marked RELEASED without` +
        ` telling the provider`,
    );
  }
}
