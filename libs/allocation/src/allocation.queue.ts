import type { JobsOptions } from 'bullmq';

/** The BullMQ queue (under the deployment's REDIS_KEY_PREFIX) that carries allocation jobs. */
export const ALLOCATION_QUEUE = 'allocation';

export const ALLOCATE_JOB = 'allocate';

export interface AllocationJobData {
  matchId: string;
}

/** The backoff type the allocator's worker computes from its own config. */
export const ALLOCATION_BACKOFF = 'allocation';

/**
 * Job id = match id, so a redelivered `match.state_changed` never queues a second allocation.
 * BullMQ's own attempt limit is only a ceiling: the allocator ends a match's retries after its
 * ALLOCATION_MAX_ATTEMPTS (failing the match), and computes the delays (ALLOCATION_RETRY_*).
 */
export function allocationJobOptions(matchId: string): JobsOptions {
  return {
    jobId: matchId,
    attempts: 100,
    backoff: { type: ALLOCATION_BACKOFF },
    removeOnComplete: { age: 3_600, count: 10_000 },
    removeOnFail: { age: 7 * 86_400 },
  };
}
