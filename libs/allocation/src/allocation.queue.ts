import type { JobsOptions } from 'bullmq';

/** The BullMQ queue (under the deployment's REDIS_KEY_PREFIX) that carries allocation jobs. */
export const ALLOCATION_QUEUE = 'allocation';

export const ALLOCATE_JOB = 'allocate';

/**
 * Publish the roster revision of a filled backfill request (the job's `backfillRequestId`) on
 * the match's allocated server: signed by the allocator, which holds the join keys.
 */
export const BACKFILL_JOB = 'backfill';

/**
 * Sign a fresh join token for a player who left the running match (the job's `rejoinPlayerId`),
 * so that it can rejoin after its first token expired: the allocator holds the join keys.
 */
export const REJOIN_TOKEN_JOB = 'rejoin-token';

export interface AllocationJobData {
  matchId: string;
  /** Set on a {@link REJOIN_TOKEN_JOB}: the player who left. */
  rejoinPlayerId?: string;
  /** Set on a {@link BACKFILL_JOB}: the request whose players the revision adds. */
  backfillRequestId?: string;
  /**
   * W3C trace context of whoever queued the job (the dispatcher's delivery of the match's
   * ALLOCATING event), so the allocator's span joins the match's trace. Absent when not traced.
   */
  traceparent?: string;
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

/** One rejoin-token job per leave (the match revision of its LEFT event). */
export function rejoinTokenJobOptions(
  matchId: string,
  playerId: string,
  revision: number,
): JobsOptions {
  return {
    ...allocationJobOptions(matchId),
    jobId: `rejoin-${matchId}-${playerId}-${revision}`,
    attempts: 5,
  };
}

/** One backfill job per request (BullMQ refuses ':' in custom ids); retried like an allocation. */
export function backfillJobOptions(requestId: string): JobsOptions {
  return { ...allocationJobOptions(requestId), jobId: `backfill-${requestId}` };
}

/**
 * The BullMQ queue of release requests: reconciliation (the maintenance app) asks for the server
 * of an ended match to be given back, and the allocator, which holds the providers and their
 * credentials, releases it at the provider and then marks the allocation RELEASED.
 */
export const ALLOCATION_RELEASE_QUEUE = 'allocation-release';

export const RELEASE_JOB = 'release';

export interface AllocationReleaseJobData {
  matchId: string;
}

/** One pending request per match (BullMQ refuses ':' in custom ids). */
export function releaseJobId(matchId: string): string {
  return `release-${matchId}`;
}

/**
 * Tried once per request and then removed, finished or failed: while the allocation is still live
 * after a failure, the next reconciliation pass asks again (the retry), and a request that is
 * still waiting absorbs the repeats (same job id).
 */
export function releaseJobOptions(matchId: string): JobsOptions {
  return { jobId: releaseJobId(matchId), attempts: 1, removeOnComplete: true, removeOnFail: true };
}
