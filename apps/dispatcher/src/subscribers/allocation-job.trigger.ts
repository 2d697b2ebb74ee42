import type { JobsOptions, Queue } from 'bullmq';
import type { AllocationJobData } from '@matchplane/allocation';
import { activeTraceparent } from '@matchplane/observability';
import type { OutboxEnvelope, OutboxSubscriber } from '@matchplane/outbox';

/** The allocation-queue job an event asks for (its data without the trace context). */
export interface AllocationJob {
  readonly name: string;
  readonly data: Omit<AllocationJobData, 'traceparent'>;
  /** Carries the job id that makes a redelivered event (at-least-once) add nothing. */
  readonly options: JobsOptions;
}

/**
 * An outbox subscriber that turns some events into one allocation-queue job each, carrying this
 * delivery's trace context to the allocator. A subclass says which events, and which job.
 */
export abstract class AllocationJobTrigger implements OutboxSubscriber {
  protected constructor(private readonly queue: Queue<AllocationJobData>) {}

  /** The job `envelope` asks for; undefined when it asks for none. */
  protected abstract jobFor(envelope: OutboxEnvelope): AllocationJob | undefined;

  async handle(envelope: OutboxEnvelope): Promise<void> {
    const job = this.jobFor(envelope);
    if (job === undefined) return;
    const traceparent = activeTraceparent();
    await this.queue.add(
      job.name,
      traceparent ? { ...job.data, traceparent } : { ...job.data },
      job.options,
    );
  }
}
