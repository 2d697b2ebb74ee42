import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { RedisKeyspace } from '@matchplane/config';
import { notificationPattern, type StateNotification } from '@matchplane/contracts';
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
    private readonly client: ClientProxy,
    private readonly pattern: string,
  ) {}

  async publish(envelope: OutboxEnvelope): Promise<void> {
    await lastValueFrom(this.client.emit(this.pattern, stateNotificationOf(envelope)), {
      defaultValue: undefined,
    });
  }
}

/**
 * Hands every client event to the API replicas (Redis transport), which push it to the connected
 * players it concerns. Runs inside delivery, so a client never sees revision n+1 of an aggregate
 * before revision n.
 */
@Injectable()
@SubscribesTo(...CLIENT_EVENT_TYPES)
export class ClientNotificationSubscriber implements OutboxSubscriber {
  private readonly publisher: StateNotificationPublisher;

  constructor(
    @Inject(NOTIFICATIONS_CLIENT) client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.publisher = new StateNotificationPublisher(
      client,
      notificationPattern(keyspace.REDIS_KEY_PREFIX),
    );
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
