import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import Redis from 'ioredis';
import { DispatcherConfig } from '@matchplane/config';
import {
  DELIVERY_JOB,
  deliveryJobId,
  DELIVERY_QUEUE,
  OutboxRepository,
  outboxWakeChannel,
  type DeliveryJobData,
  type OutboxRow,
} from '@matchplane/outbox';

/**
 * Moves due aggregate heads from PostgreSQL to BullMQ. Woken by the writers' post-commit publish,
 * with a polling backstop for lost wake-ups, backoffs coming due and abandoned claims. Any number
 * of relays may run: the claim query's row locks keep them apart.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private subscriber?: Redis;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly outbox: OutboxRepository,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    @Inject(Redis) private readonly redis: Redis,
    @Inject(DispatcherConfig) private readonly config: DispatcherConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => undefined); // the shared connection already logs outages
    this.subscriber.on('message', () => this.wake());
    await this.subscriber.subscribe(outboxWakeChannel(this.config.REDIS_KEY_PREFIX));
    this.timer = setInterval(() => this.wake(), this.config.OUTBOX_POLL_INTERVAL_MS);
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.subscriber?.disconnect();
    await this.running;
  }

  /** Coalesces wake-ups: at most one pass runs, and one more follows if woken meanwhile. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pump().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const claimed = await this.outbox.claimHeads(this.config.OUTBOX_CLAIM_BATCH, this.config.OUTBOX_CLAIM_LEASE_MS);
        if (claimed.length > 0) await enqueueDeliveries(this.queue, claimed);
        if (claimed.length < this.config.OUTBOX_CLAIM_BATCH || this.stopped) return;
      }
    } catch (error) {
      // Rows claimed but not enqueued are recovered by the auditor (or the claim lease).
      this.logger.warn(`relay pass failed: ${(error as Error).message}`);
    }
  }
}

/**
 * One job per claim, not per row: re-enqueueing the same claim (a second relay, the auditor) is
 * deduplicated, while a row taken over after its claim lease gets a fresh job. With the bare
 * outbox id the takeover was swallowed as a duplicate of the dead worker's job, which BullMQ keeps
 * "active" until its lock expires and a stalled check runs (30-60 s, whatever the lease).
 */
export function claimJobId(row: Pick<OutboxRow, 'id' | 'claimed_at'>): string {
  if (!row.claimed_at) throw new Error(`outbox ${row.id} is not claimed`);
  return `${deliveryJobId(row.id)}-${row.claimed_at.getTime()}`;
}

export async function enqueueDeliveries(
  queue: Queue<DeliveryJobData>,
  rows: readonly Pick<OutboxRow, 'id' | 'aggregate_id' | 'claimed_at'>[],
): Promise<void> {
  await queue.addBulk(
    rows.map((row) => ({
      name: DELIVERY_JOB,
      data: { outboxId: row.id, aggregateId: row.aggregate_id },
      // Retries are the outbox's business (attempts, backoff, dead letters), not BullMQ's.
      opts: { jobId: claimJobId(row), attempts: 1, removeOnComplete: true, removeOnFail: true },
    })),
  );
}
