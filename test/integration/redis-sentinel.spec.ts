import { Logger } from '@nestjs/common';
import { ClientRedis } from '@nestjs/microservices';
import { Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { lastValueFrom } from 'rxjs';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import {
  bullConnection,
  createRedisConnection,
  redisTransportOptions,
} from '@matchplane/persistence';
import { sleep } from '../bench/bench.processes';
import { makeScratch, removeScratch, run } from '../chaos/private-services';
import { RedisSentinelGroup, SENTINEL_MASTER } from '../support/redis-sentinel-group';

const PREFIX = 'mp_sentinel';

/** A command straight to one server, bypassing the apps' connections. */
async function on(port: number, ...command: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...command])).trim();
}

/** Repeats `attempt` until it reports success; a failover's reconnect may drop the first tries. */
async function eventually(what: string, attempt: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 300; tries += 1) {
    if (await attempt().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`never: ${what}`);
}

/**
 * REDIS_SENTINELS and REDIS_SENTINEL_MASTER alone: every kind of Redis connection the apps make
 * (the stores', a subscriber duplicated from it, BullMQ's, the microservices transport's) reaches
 * the master the sentinel names, and reaches the new one after a failover.
 */
describe('Redis through Sentinel', () => {
  let scratch: string;
  let group: RedisSentinelGroup | undefined;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    scratch = makeScratch('matchplane-sentinel-');
    group = await RedisSentinelGroup.create(scratch);
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await group?.destroy();
    removeScratch(scratch);
  });

  it('fails a write to a replica named as a fixed address, rather than retrying it for ever', async () => {
    const config = loadConfig(ServiceConfig, {
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: String(group!.replica.redis.port),
    });
    const store = createRedisConnection(config, new Logger('Redis'), 'replica-test');
    try {
      await expect(store.set(`${PREFIX}:on-replica`, '1')).rejects.toThrow(/^READONLY/);
    } finally {
      store.disconnect();
    }
  });

  it('writes, queues, works and publishes on the new master after SENTINEL FAILOVER, and after the master is killed', async () => {
    const sentinels = group!;
    const config = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: `127.0.0.1:${sentinels.sentinelServicePort}`,
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
      REDIS_KEY_PREFIX: PREFIX,
    });
    const store = createRedisConnection(config, new Logger('Redis'), 'sentinel-test');
    closers.push(() => store.quit());
    const subscriber: Redis = store.duplicate();
    subscriber.on('error', () => undefined); // the store's connection logs outages
    closers.push(() => subscriber.quit());
    const queue = new Queue('sentinel-test', {
      connection: bullConnection(config),
      prefix: config.REDIS_KEY_PREFIX,
    });
    closers.push(() => queue.close());
    // A worker's blocking connection, the one a failover is hardest on.
    const processed: string[] = [];
    const worker = new Worker(
      'sentinel-test',
      (job) => {
        processed.push(job.id!);
        return Promise.resolve();
      },
      { connection: bullConnection(config), prefix: config.REDIS_KEY_PREFIX },
    );
    worker.on('error', () => undefined); // its reconnects during the failovers
    closers.push(() => worker.close());
    const transport = new ClientRedis(redisTransportOptions(config, `${PREFIX}:publisher`));
    closers.push(() => transport.close());
    const received: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => received.push(message));
    await subscriber.subscribe(`${PREFIX}:events`);
    await transport.connect();

    const firstMaster = sentinels.master.redis.port;
    await store.set(`${PREFIX}:before`, '1');
    await queue.add('job', { n: 1 }, { jobId: 'before' });
    expect(await on(firstMaster, 'GET', `${PREFIX}:before`)).toBe('1');
    expect(await on(firstMaster, 'EXISTS', `${PREFIX}:sentinel-test:before`)).toBe('1');

    await sentinels.failover();
    const newMaster = sentinels.replica.redis.port;
    expect(await sentinels.masterPort()).toBe(sentinels.replica.servicePort);

    // The old master, now a replica, would answer READONLY: the write goes to the new one.
    await store.set(`${PREFIX}:after`, '2');
    expect(await on(newMaster, 'ROLE')).toMatch(/^master/);
    expect(await on(newMaster, 'GET', `${PREFIX}:after`)).toBe('2');

    await queue.add('job', { n: 2 }, { jobId: 'after' });
    expect(await on(newMaster, 'EXISTS', `${PREFIX}:sentinel-test:after`)).toBe('1');
    await eventually('the worker processes the job queued on the new master', () =>
      Promise.resolve(processed.includes('after')),
    );

    // The subscriber resubscribed on the new master: a message published there reaches it.
    await eventually('a message published on the new master reaches the subscriber', async () => {
      await on(newMaster, 'PUBLISH', `${PREFIX}:events`, 'direct');
      return received.includes('direct');
    });
    // The transport publishes on the new master too (on a replica a publish reaches only that
    // replica's subscribers).
    await eventually('a transport publish reaches the subscriber on the new master', async () => {
      await lastValueFrom(transport.emit(`${PREFIX}:events`, { via: 'transport' }));
      return received.some((message) => message.includes('"via":"transport"'));
    });

    // No orderly hand-over this time: the master dies, the sentinel promotes the other server.
    const survivor = (await sentinels.killMaster()).redis.port;
    expect(survivor).toBe(firstMaster);
    await eventually('a write reaches the promoted survivor', async () => {
      await store.set(`${PREFIX}:killed`, '3');
      return (await on(survivor, 'GET', `${PREFIX}:killed`)) === '3';
    });
    await queue.add('job', { n: 3 }, { jobId: 'killed' });
    expect(await on(survivor, 'EXISTS', `${PREFIX}:sentinel-test:killed`)).toBe('1');
    await eventually('the worker processes the job queued on the survivor', () =>
      Promise.resolve(processed.includes('killed')),
    );
  });
});
