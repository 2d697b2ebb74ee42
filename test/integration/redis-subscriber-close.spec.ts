import { once } from 'node:events';
import Redis from 'ioredis';
import { closeRedis } from '@matchplane/persistence';
import { freePort } from '../support/processes';
import { RedisProxy } from '../support/redis-proxy';

/**
 * On reconnecting, ioredis sends a subscriber's SUBSCRIBE again and leaves the reply's promise
 * uncaught. A subscriber disconnected while that reply is due (an app shut down just after Redis
 * came back) rejected it nowhere: an unhandled rejection, which ends a Node process (a CI run's
 * test failed on one, "Connection is closed.", when its dispatcher closed). closeRedis lets the
 * reply arrive first.
 */
describe(closeRedis.name, () => {
  let proxy: RedisProxy;
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    proxy = new RedisProxy(await freePort());
    await proxy.open();
    process.on('unhandledRejection', record);
  });

  afterAll(async () => {
    process.off('unhandledRejection', record);
    await proxy.close();
  });

  it('closes a subscriber whose SUBSCRIBE is being sent again without an unhandled rejection', async () => {
    const subscriber = new Redis({ host: '127.0.0.1', port: proxy.port, retryStrategy: () => 50 });
    subscriber.on('error', () => undefined);
    await subscriber.subscribe('mp-test-wake');
    proxy.cut();
    await proxy.open();
    // 'ready' is emitted on the tick after the reconnected client sent its SUBSCRIBE again.
    await once(subscriber, 'ready');
    await closeRedis(subscriber);
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(subscriber.status).toBe('end');
    expect(unhandled).toEqual([]);
  });

  it('drops a subscriber that cannot reach Redis at once, for good', async () => {
    const subscriber = new Redis({ host: '127.0.0.1', port: proxy.port, retryStrategy: () => 50 });
    subscriber.on('error', () => undefined);
    await subscriber.subscribe('mp-test-wake');
    proxy.cut();
    await once(subscriber, 'reconnecting');
    await closeRedis(subscriber);
    const connections = proxy.connections;
    await proxy.open();
    // Several of its reconnect delays.
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(proxy.connections).toBe(connections);
  });
});
