import { IsIn } from 'class-validator';
import { EnvVar, IsIntInRange, WorkerConfig, healthPort } from '@matchplane/config';

/** How client events reach the API replicas: only those holding a recipient's socket, or all. */
export const NOTIFY_FANOUTS = ['targeted', 'broadcast'] as const;
export type NotifyFanout = (typeof NOTIFY_FANOUTS)[number];

export class DispatcherConfig extends WorkerConfig {
  @healthPort()
  HEALTH_PORT = 9101;

  @EnvVar({
    description: 'Relay polling backstop: how often it looks for due rows without a wake-up (ms)',
  })
  @IsIntInRange(10, 60_000)
  OUTBOX_POLL_INTERVAL_MS = 250;

  @EnvVar({
    description:
      'Least time between the starts of two relay claim passes; the commit signals of a burst within it cost one pass (ms)',
  })
  @IsIntInRange(0, 1_000)
  OUTBOX_RELAY_MIN_INTERVAL_MS = 5;

  @EnvVar({
    description:
      'Least time between the starts of two settle statements (acks, failures, next claims) of one dispatcher; the results arriving within it share one (ms)',
  })
  @IsIntInRange(0, 1_000)
  OUTBOX_SETTLE_MIN_INTERVAL_MS = 5;

  @EnvVar({
    description: 'Aggregate heads the relay claims per query (at most the free delivery slots)',
  })
  @IsIntInRange(1, 10_000)
  OUTBOX_CLAIM_BATCH = 500;

  @EnvVar({
    description:
      'A dispatcher whose heartbeat is older than this is presumed dead and its claims are taken over; it beats every third of it (ms)',
  })
  @IsIntInRange(300, 600_000)
  OUTBOX_OWNER_TIMEOUT_MS = 1_500;

  @EnvVar({
    description:
      'Last-resort backstop: a claim older than this is presumed abandoned even if its owner still beats (ms)',
  })
  @IsIntInRange(1_000, 3_600_000)
  OUTBOX_CLAIM_LEASE_MS = 60_000;

  @EnvVar({ description: 'Failed deliveries of one row before it is dead-lettered' })
  @IsIntInRange(1, 1_000)
  MAX_OUTBOX_DELIVERY_ATTEMPTS = 10;

  @EnvVar({
    description: 'First retry delay ceiling after a failed delivery; doubles per attempt (ms)',
  })
  @IsIntInRange(0, 3_600_000)
  OUTBOX_RETRY_BASE_MS = 500;

  @EnvVar({ description: 'Largest retry delay after a failed delivery (ms)' })
  @IsIntInRange(0, 86_400_000)
  OUTBOX_RETRY_CAP_MS = 60_000;

  @EnvVar({ description: 'Aggregates one dispatcher process delivers at once (one event each)' })
  @IsIntInRange(1, 10_000)
  DISPATCHER_CONCURRENCY = 64;

  @EnvVar({
    description:
      "How client events reach the API replicas: targeted (one publish per recipient on the player's channel, heard only by the replicas holding a socket of that player) or broadcast (one publish every replica hears and filters). API replicas listen to both, so either works with any API version that has player channels",
  })
  @IsIn(NOTIFY_FANOUTS)
  NOTIFY_FANOUT: NotifyFanout = 'targeted';

  @EnvVar({
    description:
      "How long a client event's publish waits for an unreachable Redis to answer again (a Sentinel failover) before its delivery fails into the outbox's retry backoff (ms); 0 fails at once",
  })
  @IsIntInRange(0, 60_000)
  NOTIFY_PUBLISH_WAIT_MS = 3_000;
}
