import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import {
  ALLOCATION_QUEUE,
  BACKFILL_JOB,
  backfillJobOptions,
  type AllocationJobData,
} from '@matchplane/allocation';
import { BACKFILL_STATE_CHANGED } from '@matchplane/domain';
import { activeTraceparent } from '@matchplane/observability';
import { SubscribesTo, type OutboxEnvelope, type OutboxSubscriber } from '@matchplane/outbox';

/**
 * A backfill request the matcher filled becomes one job on the allocation queue: the allocator,
 * which holds the join keys, signs the added players' tokens and publishes the roster revision.
 * Job id = request id, so a redelivered event adds nothing.
 */
@Injectable()
@SubscribesTo(BACKFILL_STATE_CHANGED)
export class BackfillTriggerSubscriber implements OutboxSubscriber {
  constructor(@InjectQueue(ALLOCATION_QUEUE) private readonly queue: Queue<AllocationJobData>) {}

  async handle(envelope: OutboxEnvelope): Promise<void> {
    if (envelope.event !== BACKFILL_STATE_CHANGED || envelope.payload.to !== 'MATCHED') return;
    const { requestId, matchId } = envelope.payload;
    const traceparent = activeTraceparent();
    await this.queue.add(
      BACKFILL_JOB,
      { matchId, backfillRequestId: requestId, ...(traceparent ? { traceparent } : {}) },
      backfillJobOptions(requestId),
    );
  }
}
