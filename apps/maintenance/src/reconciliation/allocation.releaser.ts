import type { EntityManager } from 'typeorm';
import { AllocationStore, type EndedMatchAllocation } from '@matchplane/allocation';

/** A live allocation of a match that has ended, as reconciliation found it (AllocationStore's record). */
export type FinishedMatchAllocation = EndedMatchAllocation;

/**
 * What a release did: the server was given back and the row marked (`released`), the release was
 * handed to whoever holds the provider (`requested`), or such a request is still waiting
 * (`pending`, nothing new done).
 */
export type AllocationReleaseOutcome = 'released' | 'requested' | 'pending';

/**
 * The port through which reconciliation gives a finished match's server back to its provider.
 *
 * `release` runs inside `manager`'s transaction, which holds the allocation row locked (so one
 * replica acts on it). A releaser that lets the server go itself leaves the row RELEASED (or
 * FAILED) in that transaction and answers `released`; one that hands the work on answers
 * `requested`, and the row stays live until the release is done (the next pass asks again if it
 * failed). It must be idempotent by match id: it is asked again at every pass while the row is live.
 */
export abstract class AllocationReleaser {
  abstract release(
    allocation: FinishedMatchAllocation,
    manager: EntityManager,
  ): Promise<AllocationReleaseOutcome>;
}

/** Marks the row released in the caller's transaction; the provider side is the caller's part. */
export function markAllocationReleased(manager: EntityManager, matchId: string): Promise<void> {
  return new AllocationStore().markReleased(manager, matchId);
}
