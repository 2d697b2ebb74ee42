import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { DispatcherConfig } from '@matchplane/config';
import { DELIVERY_QUEUE, OutboxRepository, type DeliveryJobData } from '@matchplane/outbox';
import { claimJobId, enqueueDeliveries } from './outbox.relay';

/**
 * Re-enqueues claimed rows whose job is gone from Redis (a Redis restart or flush), long before
 * the claim lease would expire. Re-adding is safe: the job id names the claim (outbox id + claimed_at).
 */
@Injectable()
export class OutboxAuditor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxAuditor.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly outbox: OutboxRepository,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    @Inject(DispatcherConfig) private readonly config: DispatcherConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.audit()
        .catch((error: Error) => this.logger.warn(`audit failed: ${error.message}`))
        .then(() => {
          this.running = undefined;
        });
    }, this.config.OUTBOX_AUDIT_INTERVAL_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Returns how many rows it re-enqueued. */
  async audit(): Promise<number> {
    const claimed = await this.outbox.claimedBefore(this.config.OUTBOX_AUDIT_MIN_AGE_MS, 1_000);
    const orphans = [];
    for (const row of claimed) {
      if ((await this.queue.getJobState(claimJobId(row))) === 'unknown') orphans.push(row);
    }
    if (orphans.length > 0) {
      await enqueueDeliveries(this.queue, orphans);
      this.logger.warn(`re-enqueued ${orphans.length} claimed outbox row(s) whose job was missing from Redis`);
    }
    return orphans.length;
  }
}
