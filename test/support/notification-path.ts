import { ClientProxyFactory, type ClientProxy } from '@nestjs/microservices';
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import type { StateNotification } from '@matchplane/contracts';
import type { ServiceConfig } from '@matchplane/config';
import { redisTransportClient } from '@matchplane/persistence';
import { NotificationFanoutListener } from '../../apps/api/src/notifications/notification-fanout.listener';
import { PlayerChannelsListener } from '../../apps/api/src/notifications/player-channels.listener';
import type { NotificationFanoutOptions } from '../../apps/api/src/notifications/notification.options';
import type { PlayerSocketsRegistry } from '../../apps/api/src/notifications/player-sockets.registry';
import { PatientTransport } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';

/** What the API's fan-out hands to sockets, recorded instead of written to sockets; catch-ups counted. */
export class RecordingSockets {
  readonly broadcast: StateNotification[] = [];
  readonly targeted: { playerIds: string[]; notification: StateNotification }[] = [];
  catchUps = 0;

  /** `playerIds`: the players holding a socket here (resubscribed after a reconnect). */
  constructor(private readonly playerIds: string[] = []) {}

  fanOut(notification: StateNotification): void {
    this.broadcast.push(notification);
  }
  fanOutTo(playerIds: string[], notification: StateNotification): void {
    this.targeted.push({ playerIds, notification });
  }
  players(): string[] {
    return this.playerIds;
  }
  catchUpAll(): Promise<void> {
    this.catchUps += 1;
    return Promise.resolve();
  }
  catchUpPlayers(): Promise<void> {
    return this.catchUpAll();
  }
  closeEndedSessions(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The notification path as the apps build it, on `redis` and `config`: the API's broadcast
 * listener and player-channel listener handing to `sockets`, and the dispatcher's publishers
 * (no reconnect of its own, auto-pipelined) behind their patient transports. `start` subscribes the
 * broadcast listener; `close` ends them all.
 */
export function notificationPath(
  config: ServiceConfig,
  redis: Redis,
  sockets: RecordingSockets,
  publishWaitMs: number,
) {
  const options = config as unknown as NotificationFanoutOptions;
  const registry = sockets as unknown as PlayerSocketsRegistry;
  const listener = new NotificationFanoutListener(options, registry);
  const channels = new PlayerChannelsListener(options, redis, registry, new Registry());
  // As the dispatcher builds them for NOTIFY_FANOUT=broadcast and =targeted (sharded on a cluster).
  const publisher = (sharded: boolean): ClientProxy =>
    ClientProxyFactory.create(
      redisTransportClient(config, `${config.REDIS_KEY_PREFIX}:test-publisher`, {
        reconnect: false,
        autoPipelining: true,
        sharded,
      }),
    );
  const client = publisher(false);
  const playerClient = publisher(true);
  return {
    channels,
    /** For the broadcast pattern. */
    transport: new PatientTransport(client, publishWaitMs),
    /** For player channels. */
    playerTransport: new PatientTransport(playerClient, publishWaitMs),
    start: () => listener.onApplicationBootstrap(),
    close: async () => {
      await client.close();
      await playerClient.close();
      await channels.onApplicationShutdown();
      await listener.onApplicationShutdown();
    },
  };
}
