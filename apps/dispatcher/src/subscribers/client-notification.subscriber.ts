import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { RedisKeyspace } from '@matchplane/config';
import { notificationPattern, type StateNotification } from '@matchplane/contracts';
import { RATING_UPDATED } from '@matchplane/domain';
import {
  EVENT_TYPES,
  SubscribesTo,
  type OutboxEnvelope,
  type OutboxSubscriber,
} from '@matchplane/outbox';

export const NOTIFICATIONS_CLIENT = Symbol('NOTIFICATIONS_CLIENT');

/**
 * Hands every delivered event to the API replicas (Redis transport), which push it to the
 * connected players it concerns. Runs inside delivery, so a client never sees revision n+1 of an
 * aggregate before revision n.
 */
@Injectable()
@SubscribesTo(...EVENT_TYPES)
export class ClientNotificationSubscriber implements OutboxSubscriber {
  private readonly pattern: string;

  constructor(
    @Inject(NOTIFICATIONS_CLIENT) private readonly client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.pattern = notificationPattern(keyspace.REDIS_KEY_PREFIX);
  }

  async handle(envelope: OutboxEnvelope): Promise<void> {
    const notification: StateNotification = {
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
    await lastValueFrom(this.client.emit(this.pattern, notification), { defaultValue: undefined });
  }
}

/**
 * What the notification reports as the aggregate's state: the state a match, ticket or backfill
 * request entered (players added to a match leave its state as it was); a rating has no states,
 * so its event says RATED. (The API's fan-out sends match events to sockets only; the others are
 * published for any listener of the pattern.)
 */
function notifiedState(envelope: OutboxEnvelope): string {
  if (envelope.event === RATING_UPDATED) return 'RATED';
  return 'to' in envelope.payload ? envelope.payload.to : envelope.payload.state;
}
