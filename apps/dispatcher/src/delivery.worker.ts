import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, type OnModuleInit } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { DispatcherConfig } from '@matchplane/config';
import { DELIVERY_QUEUE, OutboxDelivery, OutboxRepository, type DeliveryJobData } from '@matchplane/outbox';
import { enqueueDeliveries } from './outbox.relay';

/**
 * Delivers one claimed row per job, then hands the aggregate's next due row to the queue, so an
 * aggregate's run flows without waiting for the relay while it keeps one job in flight.
 */
@Processor(DELIVERY_QUEUE)
export class DeliveryWorker extends WorkerHost implements OnModuleInit {
  private readonly logger = new Logger(DeliveryWorker.name);

  constructor(
    private readonly delivery: OutboxDelivery,
    private readonly outbox: OutboxRepository,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    @Inject(DispatcherConfig) private readonly config: DispatcherConfig,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.DISPATCHER_CONCURRENCY;
  }

  async process(job: Job<DeliveryJobData>): Promise<string> {
    const { outcome } = await this.delivery.deliver(job.data.outboxId);
    if (outcome === 'published' || outcome === 'dead-lettered' || outcome === 'not-pending') {
      const next = await this.outbox.claimNext(job.data.aggregateId);
      if (next) await enqueueDeliveries(this.queue, [next]);
    }
    return outcome;
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<DeliveryJobData> | undefined, error: Error): void {
    this.logger.warn(`delivery of outbox ${job?.data.outboxId ?? '?'} stopped: ${error.message}`);
  }
}
