import {
  REDIS_RECONNECT_MAX_DELAY_MS,
  redisRetryDelayMs,
  redisTransportOptions,
} from './redis.module';

const config = {
  REDIS_HOST: 'redis.internal',
  REDIS_PORT: 6380,
  REDIS_PASSWORD: 'secret',
  REDIS_TLS: false,
};

describe(redisTransportOptions.name, () => {
  it('keeps a listener reconnecting by default', () => {
    expect(redisTransportOptions(config, 'mp:api-notifications')).toEqual({
      host: 'redis.internal',
      port: 6380,
      password: 'secret',
      reconnectOnError: expect.any(Function),
      connectionName: 'mp:api-notifications',
      retryAttempts: Number.MAX_SAFE_INTEGER,
      retryDelay: REDIS_RECONNECT_MAX_DELAY_MS,
    });
  });

  it('leaves a publisher that reconnects on its next publish without retry attempts, pipelined', () => {
    const options = redisTransportOptions(config, 'mp:dispatcher-notifications', {
      reconnect: false,
      autoPipelining: true,
    });
    expect(options).toEqual({
      host: 'redis.internal',
      port: 6380,
      password: 'secret',
      reconnectOnError: expect.any(Function),
      connectionName: 'mp:dispatcher-notifications',
      enableAutoPipelining: true,
    });
    // The Nest client drops a lost connection only when retryAttempts is absent, not merely 0.
    expect('retryAttempts' in options).toBe(false);
  });

  it('publishes sharded, unpipelined, only under Redis Cluster', () => {
    const sharded = { reconnect: false, autoPipelining: true, sharded: true };
    const onCluster = redisTransportOptions(
      { ...config, REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000' },
      'mp:dispatcher-notifications',
      sharded,
    );
    expect(onCluster.cluster?.shardedPublish).toBe(true);
    expect(onCluster.cluster?.options.enableAutoPipelining).toBe(false);
    // A single server (or Sentinel master) has no shards: plain PUBLISH, no cluster options.
    expect('cluster' in redisTransportOptions(config, 'mp:dispatcher-notifications', sharded)).toBe(
      false,
    );
  });
});

describe(redisRetryDelayMs.name, () => {
  it('backs off from 200 ms but never waits more than half a second, however long Redis is gone', () => {
    const delays = Array.from({ length: 50 }, (_, i) => redisRetryDelayMs(i + 1));
    expect(delays.slice(0, 3)).toEqual([200, 400, 500]);
    expect(Math.max(...delays)).toBe(REDIS_RECONNECT_MAX_DELAY_MS);
    expect(REDIS_RECONNECT_MAX_DELAY_MS).toBeLessThanOrEqual(500);
  });
});
