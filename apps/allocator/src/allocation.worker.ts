import { redisKeyPrefix } from '@matchplane/config';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import { Worker, type Job } from 'bullmq';
import { AllocatorConfig } from './allocator.config';
import {
  ALLOCATE_JOB,
  ALLOCATION_BACKOFF,
  ALLOCATION_QUEUE,
  BACKFILL_JOB,
  REJOIN_TOKEN_JOB,
  type AllocationJobData,
} from '@matchplane/allocation';
import { RejoinTokenIssuer, type RejoinTokenOutcome } from './rejoin-token.issuer';
import { BackfillPublisher, type BackfillPublishOutcome } from './backfill-publisher';
import { contextFromTraceparent, inSpan } from '@matchplane/observability';
import { backoffDelayMs, bullConnection } from '@matchplane/persistence';
import { AllocationMetrics } from './allocation.metrics';
import { AllocationService, type AllocationOutcome } from './allocation.service';

/**
 * Consumes allocation jobs. A BullMQ Worker built here rather than through @Processor: its
 * concurrency, lock, stall limit and backoff come from AllocatorConfig at run time, and
 * @Processor takes worker options only as static decorator arguments. The handler is thin: the
 * service re-reads the match and resumes where the last attempt stopped. An attempt that throws is
 * retried with jittered exponential backoff; the last one fails the match (never left hanging).
 */
@Injectable()
export class AllocationWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AllocationWorker.name);
  private worker?: Worker<
    AllocationJobData,
    AllocationOutcome | BackfillPublishOutcome | RejoinTokenOutcome | 'failed'
  >;

  constructor(
    private readonly allocations: AllocationService,
    private readonly backfills: BackfillPublisher,
    private readonly rejoinTokens: RejoinTokenIssuer,
    private readonly metrics: AllocationMetrics,
    @Inject(AllocatorConfig) private readonly config: AllocatorConfig,
  ) {}

  onApplicationBootstrap(): void {
    const config = this.config;
    this.worker = new Worker<
      AllocationJobData,
      AllocationOutcome | BackfillPublishOutcome | RejoinTokenOutcome | 'failed'
    >(
      ALLOCATION_QUEUE,
      (job) =>
        // Every attempt is a span of the match's trace, carried in the job by the dispatcher.
        inSpan(
          'allocate match',
          {
            kind: SpanKind.CONSUMER,
            parent: contextFromTraceparent(job.data.traceparent),
            attributes: {
              'messaging.system': 'bullmq',
              'messaging.destination.name': ALLOCATION_QUEUE,
              'matchplane.match_id': job.data.matchId,
              'matchplane.attempt': job.attemptsMade + 1,
            },
          },
          () =>
            job.name === REJOIN_TOKEN_JOB && job.data.rejoinPlayerId
              ? this.rejoinTokens.run(job.data.matchId, job.data.rejoinPlayerId)
              : job.name === BACKFILL_JOB && job.data.backfillRequestId
                ? this.publishBackfill(job, job.data.backfillRequestId)
                : this.process(job),
        ),
      {
        connection: bullConnection(config),
        prefix: redisKeyPrefix(config),
        concurrency: config.ALLOCATOR_CONCURRENCY,
        lockDuration: config.ALLOCATION_LOCK_MS,
        stalledInterval: Math.max(500, Math.floor(config.ALLOCATION_LOCK_MS / 2)),
        // A job whose allocator died resumes safely, so stalls count like attempts.
        maxStalledCount: config.ALLOCATION_MAX_ATTEMPTS,
        settings: {
          backoffStrategy: (attemptsMade: number, type?: string) =>
            type === ALLOCATION_BACKOFF
              ? backoffDelayMs(attemptsMade, {
                  baseMs: config.ALLOCATION_RETRY_BASE_MS,
                  capMs: config.ALLOCATION_RETRY_CAP_MS,
                })
              : 0,
        },
      },
    );
    this.worker.on('error', (error) => this.logger.warn(`allocation worker: ${error.message}`));
    this.worker.on('failed', (job, error) => void this.onFailed(job, error));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  private async process(job: Job<AllocationJobData>): Promise<AllocationOutcome | 'failed'> {
    const { matchId } = job.data;
    const attempt = job.attemptsMade + 1;
    const started = Date.now();
    // The first attempt's wait for a worker slot (a retry's includes its backoff delay).
    if (attempt === 1) this.metrics.waited((started - job.timestamp - (job.delay ?? 0)) / 1000);
    try {
      const outcome = await this.allocations.run(matchId);
      this.metrics.ran(outcome, (Date.now() - started) / 1000);
      return outcome;
    } catch (error) {
      this.metrics.ran('error', (Date.now() - started) / 1000);
      if (attempt >= this.config.ALLOCATION_MAX_ATTEMPTS) {
        await this.allocations.giveUp(matchId, error);
        return 'failed';
      }
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(
        `allocation of match ${matchId}, attempt ${attempt}/${this.config.ALLOCATION_MAX_ATTEMPTS}: ${message}`,
      );
      throw error;
    }
  }

  /**
   * A backfill's roster revision, retried with the allocation backoff; after the last attempt the
   * request is left MATCHED and reconciliation cancels it at its deadline (players requeued).
   */
  private async publishBackfill(
    job: Job<AllocationJobData>,
    requestId: string,
  ): Promise<BackfillPublishOutcome | 'failed'> {
    const attempt = job.attemptsMade + 1;
    try {
      return await this.backfills.run(job.data.matchId, requestId);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(
        `backfill ${requestId} of match ${job.data.matchId}, attempt ${attempt}/${this.config.ALLOCATION_MAX_ATTEMPTS}: ${message}`,
      );
      if (attempt >= this.config.ALLOCATION_MAX_ATTEMPTS) return 'failed';
      throw error;
    }
  }

  /** A job BullMQ failed without our handler's say (it stalled too often): fail the match. */
  private async onFailed(job: Job<AllocationJobData> | undefined, error: Error): Promise<void> {
    if (!job || job.name !== ALLOCATE_JOB || !/stalled/i.test(error.message)) return;
    await this.allocations.giveUp(job.data.matchId, error).catch((failure: unknown) => {
      this.logger.error(
        `could not fail match ${job.data.matchId}: ${failure instanceof Error ? failure.message : String(failure)}`,
      );
    });
  }
}
