import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { RedisKeyspace } from '@matchplane/config';
import {
  notificationPattern,
  playerNotificationChannel,
  type StateNotification,
} from '@matchplane/contracts';
import {
  MATCH_PARTICIPANTS_ADDED,
  MATCH_PRESENCE_CHANGED,
  MATCH_STATE_CHANGED,
  RATING_UPDATED,
  TICKET_STATE_CHANGED,
} from '@matchplane/domain';
import {
  SubscribesTo,
  type EventType,
  type OutboxEnvelope,
  type OutboxSubscriber,
} from '@matchplane/outbox';
import { DispatcherConfig } from '../dispatcher.config';

export const NOTIFICATIONS_CLIENT = Symbol('NOTIFICATIONS_CLIENT');

/**
 * The event types clients receive: the match's, which the API's fan-out pushes to sockets. A
 * client follows its ticket over HTTP and reads ratings with its history, so publishing those
 * would cost a message to every API replica for it to drop.
 */
export const CLIENT_EVENT_TYPES = [
  MATCH_STATE_CHANGED,
  MATCH_PARTICIPANTS_ADDED,
  MATCH_PRESENCE_CHANGED,
] as const satisfies readonly EventType[];

/**
 * Event types the dispatcher settles without a subscriber: their rows stay as history (catch-ups,
 * the console) until retention.
 */
export const HISTORY_ONLY_EVENT_TYPES = [
  TICKET_STATE_CHANGED,
  RATING_UPDATED,
] as const satisfies readonly EventType[];

/** Publishes delivered events as {@link StateNotification}s on one Redis transport pattern. */
export class StateNotificationPublisher {
  constructor(
    private readonly transport: PatientTransport,
    private readonly pattern: string,
  ) {}

  async publish(envelope: OutboxEnvelope): Promise<void> {
    await this.transport.emit(this.pattern, stateNotificationOf(envelope));
  }
}

/**
 * Publishes a delivered event on each recipient's channel ({@link playerNotificationChannel}):
 * only the API replicas holding a socket of one of them hear it. The publishes of one event leave
 * together, in order on the one connection, so a player still hears an aggregate's revisions in
 * order.
 */
export class PlayerNotificationPublisher {
  constructor(
    private readonly transport: PatientTransport,
    private readonly redisKeyPrefix: string,
  ) {}

  async publish(envelope: OutboxEnvelope): Promise<void> {
    const notification = stateNotificationOf(envelope);
    await Promise.all(
      notification.playerIds.map((playerId) =>
        this.transport.emit(playerNotificationChannel(this.redisKeyPrefix, playerId), notification),
      ),
    );
  }
}

/** Between two tries of a publish while Redis is unreachable. */
const PUBLISH_RETRY_MS = 100;

/**
 * The notification transport, waiting out a short Redis outage: a publish that fails is tried
 * again every {@link PUBLISH_RETRY_MS} (each try connects afresh, asking the sentinels for the
 * master) until `waitMs` have passed. A Sentinel promotion takes a second or two; failing the
 * delivery instead put it on the outbox's backoff (0.5 s, 1 s, 2 s...), seconds past the
 * promotion. A repeat that Redis did receive is a duplicate, which clients drop by revision.
 */
export class PatientTransport {
  constructor(
    private readonly client: ClientProxy,
    private readonly waitMs: number,
  ) {}

  async emit(pattern: string, data: StateNotification): Promise<void> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      try {
        await lastValueFrom(this.client.emit(pattern, data), { defaultValue: undefined });
        return;
      } catch (error) {
        if (Date.now() + PUBLISH_RETRY_MS > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, PUBLISH_RETRY_MS));
      }
    }
  }
}

/**
 * Hands every client event to the API replicas (Redis transport), which push it to the connected
 * players it concerns: by default only to the replicas holding a socket of a recipient
 * (NOTIFY_FANOUT). Runs inside delivery, so a client never sees revision n+1 of an aggregate
 * before revision n.
 */
@Injectable()
@SubscribesTo(...CLIENT_EVENT_TYPES)
export class ClientNotificationSubscriber implements OutboxSubscriber {
  private readonly publisher: StateNotificationPublisher | PlayerNotificationPublisher;

  constructor(
    @Inject(NOTIFICATIONS_CLIENT) client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(DispatcherConfig)
    config: Pick<DispatcherConfig, 'NOTIFY_FANOUT' | 'NOTIFY_PUBLISH_WAIT_MS'>,
  ) {
    const transport = new PatientTransport(client, config.NOTIFY_PUBLISH_WAIT_MS);
    this.publisher =
      config.NOTIFY_FANOUT === 'targeted'
        ? new PlayerNotificationPublisher(transport, keyspace.REDIS_KEY_PREFIX)
        : new StateNotificationPublisher(transport, notificationPattern(keyspace.REDIS_KEY_PREFIX));
  }

  handle(envelope: OutboxEnvelope): Promise<void> {
    return this.publisher.publish(envelope);
  }
}

/** What a listener of the pattern is told about one delivered event. */
export function stateNotificationOf(envelope: OutboxEnvelope): StateNotification {
  return {
    event: envelope.event,
    aggregateType: envelope.aggregateType,
    aggregateId: envelope.aggregateId,
    revision: Number(envelope.revision),
    state: notifiedState(envelope),
    ...('serverRegion' in envelope.payload && envelope.payload.serverRegion !== undefined
      ? { serverRegion: envelope.payload.serverRegion }
      : {}),
    occurredAt: envelope.occurredAt.toISOString(),
    playerIds: [...envelope.playerIds],
  };
}

/**
 * What the notification reports as the aggregate's state: the state a match, ticket or backfill
 * request entered (players added to a match leave its state as it was); a rating has no states,
 * so its event says RATED.
 */
function notifiedState(envelope: OutboxEnvelope): string {
  if (envelope.event === RATING_UPDATED) return 'RATED';
  return 'to' in envelope.payload ? envelope.payload.to : envelope.payload.state;
}
