import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DispatcherConfig } from './dispatcher.config';
import { OutboxDispatchersRepository, type ClaimLiveness } from '@matchplane/outbox';

/** A hand-off must happen this fraction of a timeout before the others may act on it. */
const SAFETY_FRACTION = 0.25;
/** Dead dispatchers' rows are removed every this many beats. */
const FORGET_EVERY_BEATS = 40;

/**
 * This process as a claim owner: an id in `outbox_dispatchers` with a heartbeat every third of
 * OUTBOX_OWNER_TIMEOUT_MS. The others take its claims over once the heartbeat is older than the
 * timeout, so it must not hand a claimed row to subscribers unless it can prove that cannot have
 * happened since the claim: heartbeats that succeeded without a gap from before the claim until
 * now, each timed from when it was sent (heartbeat_at is stamped after that).
 */
@Injectable()
export class DispatcherLease implements OnModuleInit {
  readonly id = randomUUID();
  readonly label = `${hostname()}:${process.pid}`;
  readonly liveness: ClaimLiveness;
  private readonly logger = new Logger(DispatcherLease.name);
  private readonly beatListeners: (() => void)[] = [];
  private timer?: NodeJS.Timeout;
  private beating?: Promise<void>;
  /** performance.now() until which no other dispatcher can take our claims over... */
  private provenUntil = 0;
  /** ...continuously since this instant (a heartbeat gap starts a new epoch). */
  private provenSince = Number.POSITIVE_INFINITY;
  private beats = 0;
  private failing = false;

  constructor(
    private readonly dispatchers: OutboxDispatchersRepository,
    @Inject(DispatcherConfig) config: DispatcherConfig,
  ) {
    this.liveness = {
      leaseMs: config.OUTBOX_CLAIM_LEASE_MS,
      ownerTimeoutMs: config.OUTBOX_OWNER_TIMEOUT_MS,
    };
  }

  /** Registered before any relay claims (onApplicationBootstrap runs after every onModuleInit). */
  async onModuleInit(): Promise<void> {
    await this.beat();
    this.timer = setInterval(
      () => {
        this.beating ??= this.beat()
          .catch((error: Error) => {
            if (!this.failing)
              this.logger.warn(`heartbeat failed (claims may be taken over): ${error.message}`);
            this.failing = true;
          })
          .finally(() => (this.beating = undefined));
      },
      Math.round(this.liveness.ownerTimeoutMs / 3),
    );
    this.timer.unref();
  }

  /**
   * Whether a row claimed by a statement sent at `claimSentAt` (performance.now()) may be handed
   * to subscribers now: this process's heartbeat and the claim's lease both still hold, with a
   * margin.
   */
  mayHandOff(claimSentAt: number): boolean {
    const now = performance.now();
    return (
      claimSentAt >= this.provenSince &&
      now < this.provenUntil &&
      now < claimSentAt + this.liveness.leaseMs * (1 - SAFETY_FRACTION)
    );
  }

  /** Called after each successful heartbeat (parked rows can be renewed then). */
  onBeat(listener: () => void): void {
    this.beatListeners.push(listener);
  }

  /** Stops beating and deletes the registration: claims still held are taken over at once. */
  async retire(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
    this.provenUntil = 0;
    this.provenSince = Number.POSITIVE_INFINITY;
    await this.dispatchers.retire(this.id).catch((error: Error) => {
      this.logger.warn(
        `could not retire dispatcher ${this.id}: ${error.message}; its claims wait for the owner timeout`,
      );
    });
  }

  private async beat(): Promise<void> {
    const sentAt = performance.now();
    await this.dispatchers.beat(this.id, this.label);
    // Committed only after the proof had lapsed: the others may have taken claims over before
    // this heartbeat was visible, so only claims made from now on are safe.
    const committedBy = performance.now();
    if (committedBy >= this.provenUntil) this.provenSince = committedBy;
    this.provenUntil = Math.max(
      this.provenUntil,
      sentAt + this.liveness.ownerTimeoutMs * (1 - SAFETY_FRACTION),
    );
    if (this.failing) this.logger.log('heartbeat restored');
    this.failing = false;
    for (const listener of this.beatListeners) listener();
    this.beats += 1;
    if (this.beats % FORGET_EVERY_BEATS === 0) {
      // Housekeeping only: a dead dispatcher's row reads as dead whether or not it is still there.
      await this.dispatchers
        .forgetSilentFor(Math.max(this.liveness.leaseMs, 10 * this.liveness.ownerTimeoutMs))
        .catch((error: Error) =>
          this.logger.warn(`could not forget dead dispatchers: ${error.message}`),
        );
    }
  }
}
