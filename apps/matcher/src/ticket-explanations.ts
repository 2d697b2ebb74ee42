import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisKeyspace, redisKeyPrefix, TicketHeartbeatTimeout } from '@matchplane/config';
import type { TicketExplanation } from '@matchplane/contracts';
import { ticketExplanationKey } from '@matchplane/tickets';

export interface Explained {
  readonly ticketId: string;
  readonly code: string;
  readonly message: string;
}

/**
 * The matcher's last word on each ticket still searching, for GET /v1/queue/tickets/{id}. Each
 * explanation lives for the heartbeat timeout: long enough to outlast a slow pass, short enough
 * that a stopped matcher's explanations do not outlive the tickets they describe by much
 * (evaluatedAt says how old one is). A ticket that leaves the queue loses its explanation with its
 * candidate (CandidateProjection, registered by TicketStore's writes).
 */
@Injectable()
export class TicketExplanations {
  private readonly prefix: string;
  private readonly ttlMs: number;

  constructor(
    @Inject(Redis) private readonly redis: Redis,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(TicketHeartbeatTimeout) heartbeat: TicketHeartbeatTimeout,
  ) {
    this.prefix = redisKeyPrefix(keyspace);
    this.ttlMs = heartbeat.TICKET_HEARTBEAT_TIMEOUT_MS;
  }

  async explain(explained: readonly Explained[], evaluatedAt: Date): Promise<void> {
    if (explained.length === 0) return;
    const at = evaluatedAt.toISOString();
    const pipeline = this.redis.pipeline();
    for (const { ticketId, code, message } of explained) {
      const value: TicketExplanation = { code, message, evaluatedAt: at };
      pipeline.set(
        ticketExplanationKey(this.prefix, ticketId),
        JSON.stringify(value),
        'PX',
        this.ttlMs,
      );
    }
    await pipeline.exec();
  }
}
