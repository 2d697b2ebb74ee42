import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { ServiceConfig } from '@matchplane/config';

export function outboxWakeChannel(prefix: string): string {
  return `${prefix}:outbox:committed`;
}

/**
 * The post-commit wake-up: a Redis publish after the writing transaction commits. (NOTIFY inside
 * the transaction takes a global lock at commit and does not pass through PgBouncer transaction
 * pooling.) Losing one is harmless: the relay also polls.
 */
@Injectable()
export class OutboxSignal {
  private readonly channel: string;

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(ServiceConfig) config: ServiceConfig,
  ) {
    this.channel = outboxWakeChannel(config.REDIS_KEY_PREFIX);
  }

  /** Call after commit; never throws, since the commit already happened. */
  committed(): void {
    this.redis.publish(this.channel, '1').catch(() => undefined);
  }
}
