import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ClientProxyFactory } from '@nestjs/microservices';
import { Registry } from 'prom-client';
import {
  notificationPattern,
  playerNotificationChannel,
  type StateNotification,
} from '@matchplane/contracts';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { createRedisConnection, redisTransportClient } from '@matchplane/persistence';
import { NotificationFanoutListener } from '../../apps/api/src/notifications/notification-fanout.listener';
import { PlayerChannelsListener } from '../../apps/api/src/notifications/player-channels.listener';
import type { NotificationFanoutOptions } from '../../apps/api/src/notifications/notification.options';
import type { PlayerSocketsRegistry } from '../../apps/api/src/notifications/player-sockets.registry';
import { PatientTransport } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';
import { sleep } from '../bench/bench.processes';
import { makeScratch, removeScratch, run } from '../chaos/private-services';
import { RedisSentinelGroup, SENTINEL_MASTER } from '../support/redis-sentinel-group';

/** The chaos run's --down: how long the killed master stays down before it is started again. */
const DOWN_MS = 1_500;

/** What the API's fan-out hands to sockets, recorded; its catch-ups are counted. */
class RecordingSockets {
  readonly broadcast: StateNotification[] = [];
  readonly targeted: StateNotification[] = [];
  catchUps = 0;
  constructor(private readonly playerIds: string[]) {}
  fanOut(notification: StateNotification): void {
    this.broadcast.push(notification);
  }
  fanOutTo(_playerIds: string[], notification: StateNotification): void {
    this.targeted.push(notification);
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

async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (
    !(await Promise.resolve()
      .then(probe)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function role(port: number): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), 'ROLE'])).trim().split('\n')[0]!;
}

/*
 * The chaos run's redis-master fault on the notification path alone: three sentinels, the master
 * SIGKILLed, promoted away from, started again 1.5 s later and made the new master's replica by
 * the sentinels. Built as the apps build them (the API's two listeners, the dispatcher's
 * publisher that does not reconnect by itself), every subscription must follow the master: a
 * notification published once the group has settled reaches both listeners.
 */
describe('notifications through Sentinel across a killed and restarted master', () => {
  let scratch: string;
  let group: RedisSentinelGroup | undefined;

  beforeAll(async () => {
    scratch = makeScratch('matchplane-sentinel-notify-');
    group = await RedisSentinelGroup.create(scratch, undefined, 3);
  });

  afterAll(async () => {
    await group?.destroy();
    removeScratch(scratch);
  });

  it('the player channel and the broadcast listener hear what the dispatcher publishes after the failover', async () => {
    const sentinels = group!;
    const config = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: sentinels.sentinelServicePorts.map((port) => `127.0.0.1:${port}`).join(),
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
      REDIS_KEY_PREFIX: 'mp_sentinel_notify',
    });
    const redis = createRedisConnection(config, new Logger('Redis'), 'sentinel-notify');
    const playerId = randomUUID();
    const sockets = new RecordingSockets([playerId]);
    const options = config as unknown as NotificationFanoutOptions;
    const registry = sockets as unknown as PlayerSocketsRegistry;
    const listener = new NotificationFanoutListener(options, registry);
    const channels = new PlayerChannelsListener(options, redis, registry, new Registry());
    const client = ClientProxyFactory.create(
      redisTransportClient(config, 'sentinel-notify-publisher', {
        reconnect: false,
        autoPipelining: true,
      }),
    );
    const transport = new PatientTransport(client, 10_000);
    const notification = (revision: number): StateNotification => ({
      event: 'match.state_changed',
      aggregateType: 'match',
      aggregateId: randomUUID(),
      revision,
      state: 'COMPLETED',
      occurredAt: new Date().toISOString(),
      playerIds: [playerId],
    });
    const publish = async (event: StateNotification) => {
      await transport.emit(notificationPattern(config.REDIS_KEY_PREFIX), event);
      await transport.emit(playerNotificationChannel(config.REDIS_KEY_PREFIX, playerId), event);
    };
    try {
      await listener.onApplicationBootstrap();
      await channels.follow(playerId);
      const before = notification(1);
      await publish(before);
      await until('the first deliveries', () => sockets.targeted.length === 1);

      const dead = sentinels.master;
      await sentinels.killMaster();
      await sleep(DOWN_MS);
      await dead.redis.start();
      // Both listeners reconnected to the new master (and caught their sockets up).
      await until('both listeners to catch up', () => sockets.catchUps >= 2);
      // The restarted server came back as a master of its own until the sentinels demote it.
      await until('the restarted master to be made a replica', async () =>
        (await role(dead.redis.port)).startsWith('slave'),
      );

      const after = notification(2);
      await publish(after);
      await until(
        'the deliveries after the failover',
        () => sockets.targeted.length === 2 && sockets.broadcast.length === 2,
      );
      expect(sockets.targeted).toEqual([before, after]);
      expect(sockets.broadcast).toEqual([before, after]);
    } finally {
      await client.close();
      channels.onApplicationShutdown();
      await listener.onApplicationShutdown();
      redis.disconnect();
    }
  }, 120_000);
});
