import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import Redis from 'ioredis';
import { DispatcherConfig } from './dispatcher.config';
import { OutboxRepository, outboxWakeChannel } from '@matchplane/outbox';
import { DeliveryPipeline } from './delivery.pipeline';
import { DispatcherLease } from './dispatcher.lease';
import { DispatcherMetrics } from './dispatcher.metrics';
import { closeRedis, duplicateRedis } from '@matchplane/persistence';

/**
 * Claims due aggregate heads for this process's {@link DeliveryPipeline}, as many as it has free
 * slots. Woken by the writers' post-commit publish, with a polling backstop for lost wake-ups,
 * backoffs coming due and claims to take over. Wake-ups are coalesced: at most one pass runs,
 * passes start at least OUTBOX_RELAY_MIN_INTERVAL_MS apart (and at least as far apart as the
 * last one took), so a burst of commits costs one claim statement. Any number of dispatchers may
 * run: the claim's row locks keep them apart.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OutboxRelay.name);
  private subscriber?: Redis;
  private poller?: NodeJS.Timeout;
  private deferred?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** The last pass stopped at the free slots: a freed slot asks for another. */
  private starved = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  private lastDuration = 0;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly pipeline: DeliveryPipeline,
    private readonly lease: DispatcherLease,
    private readonly metrics: DispatcherMetrics,
    @Inject(Redis) private readonly redis: Redis,
    @Inject(DispatcherConfig) private readonly config: DispatcherConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.pipeline.onFreeSlots(() => {
      if (this.starved) this.requestPass();
    });
    this.subscriber = duplicateRedis(
      this.redis,
      `${this.config.REDIS_KEY_PREFIX}:dispatcher-wake-ups`,
    );
    this.subscriber.on('error', () => undefined); // the shared connection already logs outages
    this.subscriber.on('message', () => this.wake());
    await this.subscriber.subscribe(outboxWakeChannel(this.config.REDIS_KEY_PREFIX));
    this.poller = setInterval(() => this.wake(), this.config.OUTBOX_POLL_INTERVAL_MS);
    this.wake();
  }

  /**
   * Before the database closes: no more passes, the deliveries under way settled, then the
   * registration deleted so that claims still held are taken over at once.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    clearTimeout(this.deferred);
    const closing = this.subscriber && closeRedis(this.subscriber);
    await this.running;
    await this.pipeline.drain();
    await this.lease.retire();
    await closing;
  }

  /** A commit signal or a poll. */
  wake(): void {
    this.metrics.wakeUps.inc();
    this.requestPass();
  }

  private requestPass(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.deferred) return;
    const wait =
      this.lastStart +
      Math.max(this.config.OUTBOX_RELAY_MIN_INTERVAL_MS, this.lastDuration) -
      performance.now();
    if (wait > 0) {
      this.deferred = setTimeout(() => {
        this.deferred = undefined;
        this.startPass();
      }, wait);
      return;
    }
    this.startPass();
  }

  private startPass(): void {
    if (this.stopped) return;
    const startedAt = performance.now();
    this.lastStart = startedAt;
    this.running = this.pass().finally(() => {
      this.running = undefined;
      this.lastDuration = performance.now() - startedAt;
      if (this.again) {
        this.again = false;
        this.requestPass();
      }
    });
  }

  private async pass(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const limit = Math.min(this.config.OUTBOX_CLAIM_BATCH, this.pipeline.freeSlots());
        if (limit === 0) {
          this.starved = true;
          return;
        }
        const sentAt = performance.now();
        this.metrics.claimPasses.inc();
        const claimed = await this.outbox.claimHeads(
          limit,
          { token: randomUUID(), owner: this.lease.id },
          this.lease.liveness,
        );
        const takenOver = claimed.filter((row) => row.previous_owner !== null);
        if (takenOver.length > 0) {
          this.metrics.takenOver.inc(takenOver.length);
          const owners = [...new Set(takenOver.map((row) => row.previous_owner))];
          this.logger.warn(
            `took over ${takenOver.length} claim(s) of dispatcher(s) ${owners.join(', ')} (heartbeat silent or claim lease expired)`,
          );
        }
        this.pipeline.accept(claimed, sentAt);
        if (claimed.length < limit) {
          this.starved = false;
          return;
        }
        // A full batch: more heads may be due right now.
      }
    } catch (error) {
      this.logger.warn(`relay pass failed: ${(error as Error).message}`);
    }
  }
}
