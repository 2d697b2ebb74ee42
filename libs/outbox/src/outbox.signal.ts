import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisKeyspace } from '@matchplane/config';
import type { UnitOfWork } from '@matchplane/persistence';

export function outboxWakeChannel(prefix: string): string {
  return `${prefix}:outbox:committed`;
}

/**
 * The post-commit wake-up: a Redis publish after the writing transaction commits. (NOTIFY inside
 * the transaction takes a global lock at commit and does not pass through PgBouncer transaction
 * pooling.) Losing one is harmless: the relay also polls.
 *
 * Coalesced: while a publish is in flight, further commits only ask for one more publish, sent
 * when it returns, so a busy writer costs a publish per Redis round trip rather than per commit,
 * and every commit is still followed by a publish sent after it.
 */
const OUTBOX_WAKE_EFFECT = 'outbox:wake';

@Injectable()
export class OutboxSignal {
  private readonly channel: string;
  private inFlight = false;
  private again = false;

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.channel = outboxWakeChannel(keyspace.REDIS_KEY_PREFIX);
  }

  /**
   * Wakes the relay once `unit`'s transaction commits (once per transaction, however many events
   * it wrote). Writers of events call it; one whose statement committed by itself calls
   * {@link committed}.
   */
  wakeAfter(unit: UnitOfWork): void {
    unit.afterCommit(OUTBOX_WAKE_EFFECT, () => this.committed());
  }

  /** Publishes the wake-up now; never throws, since the commit already happened. */
  committed(): void {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.inFlight = true;
    void this.redis
      .publish(this.channel, '1')
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = false;
        if (!this.again) return;
        this.again = false;
        this.committed();
      });
  }
}
