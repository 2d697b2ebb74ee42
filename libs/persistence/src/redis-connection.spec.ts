import { PLACEHOLDER_CA_PEM, placeholderCaFile } from '../../../test/support/placeholder-ca';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { Cluster } from 'ioredis';
import { describeRedis, redisEndpoint } from './redis-connection';
import {
  bullConnection,
  closeBullClusters,
  connectRedis,
  redisTransportOptions,
} from './redis.module';

describe(redisEndpoint.name, () => {
  const caFile = placeholderCaFile();
  const ca = PLACEHOLDER_CA_PEM;

  it('names the sentinels and the master, never a host, for every kind of connection', () => {
    const config = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: 's-1:26379,s-2:26380',
      REDIS_SENTINEL_MASTER: 'mp-main',
      REDIS_USERNAME: 'matchplane',
      REDIS_PASSWORD: 'hunter22',
      REDIS_SENTINEL_PASSWORD: 'hunter23',
    });
    const sentinel = {
      sentinels: [
        { host: 's-1', port: 26379 },
        { host: 's-2', port: 26380 },
      ],
      name: 'mp-main',
      username: 'matchplane',
      password: 'hunter22',
      sentinelPassword: 'hunter23',
    };
    for (const options of [
      redisEndpoint(config),
      bullConnection(config),
      redisTransportOptions(config, 'mp:api-notifications'),
    ]) {
      expect(options).toMatchObject(sentinel);
      expect(options).not.toHaveProperty('host');
    }
  });

  it('reaches the sentinels and the master over TLS with the CA file', () => {
    const config = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: 's-1',
      REDIS_SENTINEL_MASTER: 'mp-main',
      REDIS_TLS: 'true',
      REDIS_TLS_CA_FILE: caFile,
    });
    expect(redisEndpoint(config)).toMatchObject({
      tls: { ca },
      sentinelTLS: { ca },
      enableTLSForSentinelMode: true,
    });
    expect(
      redisEndpoint(loadConfig(ServiceConfig, { REDIS_URL: 'rediss://cache:6380' })),
    ).toMatchObject({ host: 'cache', port: 6380, tls: {} });
  });

  it('under Sentinel reconnects and resends a command a demoted master refused, and nothing else', () => {
    const { reconnectOnError } = redisEndpoint(
      loadConfig(ServiceConfig, { REDIS_SENTINELS: 's-1', REDIS_SENTINEL_MASTER: 'mp-main' }),
    );
    expect(
      reconnectOnError?.(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(2);
    expect(reconnectOnError?.(new Error('NOSCRIPT No matching script'))).toBe(false);
  });

  it('at a fixed address reconnects on READONLY but fails the command', () => {
    const { reconnectOnError } = redisEndpoint(loadConfig(ServiceConfig, {}));
    expect(
      reconnectOnError?.(new Error("READONLY You can't write against a read only replica.")),
    ).toBe(true);
    expect(reconnectOnError?.(new Error('NOSCRIPT No matching script'))).toBe(false);
  });

  it('is described without credentials', () => {
    const sentinel = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: 's-1,s-2',
      REDIS_SENTINEL_MASTER: 'mp-main',
      REDIS_PASSWORD: 'hunter22',
      REDIS_TLS: 'true',
    });
    expect(describeRedis(sentinel)).toBe(
      'Redis master "mp-main" over TLS (sentinels s-1:26379,s-2:26379)',
    );
    const plain = loadConfig(ServiceConfig, { REDIS_URL: 'redis://u:hunter22@cache:6379' });
    expect(describeRedis(plain)).toBe('Redis at cache:6379');
  });

  describe('under REDIS_CLUSTER_NODES', () => {
    const config = loadConfig(ServiceConfig, {
      REDIS_CLUSTER_NODES: 'redis-1:7000,redis-2',
      REDIS_USERNAME: 'matchplane',
      REDIS_PASSWORD: 'hunter22',
      REDIS_TLS: 'true',
      REDIS_TLS_CA_FILE: caFile,
    });
    const nodes = [
      { host: 'redis-1', port: 7000 },
      { host: 'redis-2', port: 6379 },
    ];
    const node = { username: 'matchplane', password: 'hunter22', tls: { ca } };

    it('makes a cluster client for the stores and for BullMQ, each node reached as one server', async () => {
      const stores: unknown = connectRedis(config, { lazyConnect: true }, { lazyConnect: true });
      const bull = bullConnection(config);
      try {
        for (const cluster of [stores, bull]) {
          expect(cluster).toBeInstanceOf(Cluster);
          const { redisOptions } = (cluster as Cluster).options;
          // ioredis keeps the seed nodes on the client, not in its options.
          expect((cluster as { startupNodes: unknown }).startupNodes).toEqual(nodes);
          expect(redisOptions).toMatchObject(node);
          expect(redisOptions).not.toHaveProperty('host');
        }
        // BullMQ's blocking connections need it (BullMQ checks the cluster's node options).
        expect((bull as Cluster).options.redisOptions).toMatchObject({
          maxRetriesPerRequest: null,
        });
      } finally {
        (stores as Cluster).disconnect();
        await closeBullClusters();
      }
    });

    it("carries the cluster for Nest's transport", () => {
      expect(redisTransportOptions(config, 'mp:api-notifications')).toMatchObject({
        cluster: {
          nodes,
          options: { redisOptions: { ...node, connectionName: 'mp:api-notifications' } },
        },
      });
    });

    it('is described by its nodes, without credentials', () => {
      expect(describeRedis(config)).toBe(
        'Redis Cluster over TLS (nodes redis-1:7000,redis-2:6379)',
      );
    });
  });
});
