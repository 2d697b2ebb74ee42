import { redisKeyPrefix } from '@matchplane/config';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import {
  ALLOCATION_RELEASE_QUEUE,
  AllocationReleaser,
  RELEASE_JOB,
  releaseJobId,
  releaseJobOptions,
  type AllocationReleaseJobData,
  type AllocationReleaseOutcome,
  type FinishedMatchAllocation,
} from '@matchplane/allocation';
import { MaintenanceConfig } from '../maintenance.config';
import { bullConnection } from '@matchplane/persistence';

/**
 * Hands the release to the allocator (ALLOCATION_RELEASE_QUEUE), which holds the providers and
 * their credentials (a Kubernetes service account, the launched processes): it releases the server
 * at the provider, then marks the allocation RELEASED. A request still waiting is not asked twice;
 * one that failed was removed, so the next pass asks again.
 */
@Injectable()
export class QueuedAllocationReleaser extends AllocationReleaser implements OnModuleDestroy {
  private readonly queue: Queue<AllocationReleaseJobData>;

  constructor(@Inject(MaintenanceConfig) config: MaintenanceConfig) {
    super();
    this.queue = new Queue<AllocationReleaseJobData>(ALLOCATION_RELEASE_QUEUE, {
      connection: bullConnection(config),
      prefix: redisKeyPrefix(config),
    });
  }

  async release(allocation: FinishedMatchAllocation): Promise<AllocationReleaseOutcome> {
    // The row is locked by this pass, so no other replica asks for the same match meanwhile.
    if (await this.queue.getJob(releaseJobId(allocation.matchId))) return 'pending';
    await this.queue.add(
      RELEASE_JOB,
      { matchId: allocation.matchId },
      releaseJobOptions(allocation.matchId),
    );
    return 'requested';
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
