import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  notificationPattern,
  playerNotificationChannel,
  type StateNotification,
} from '@matchplane/contracts';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { createRedisConnection } from '@matchplane/persistence';
import { sleep } from '../bench/bench.processes';
import { makeScratch, removeScratch, run } from '../chaos/private-services';
import { notificationPath, RecordingSockets } from '../support/notification-path';
import { RedisSentinelGroup, SENTINEL_MASTER } from '../support/redis-sentinel-group';

/** The chaos run's --down: how long the killed master stays down before it is started again. */
const DOWN_MS = 1_500;

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
    const path = notificationPath(config, redis, sockets, 10_000);
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
      await path.transport.emit(notificationPattern(config.REDIS_KEY_PREFIX), event);
      await path.playerTransport.emit(
        playerNotificationChannel(config.REDIS_KEY_PREFIX, playerId),
        event,
      );
    };
    try {
      await path.start();
      await path.channels.follow(playerId);
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
      expect(sockets.targeted.map((delivery) => delivery.notification)).toEqual([before, after]);
      expect(sockets.broadcast).toEqual([before, after]);
    } finally {
      await path.close();
      redis.disconnect();
    }
  }, 120_000);
});
