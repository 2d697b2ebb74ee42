import { PLACEHOLDER_CA_PEM, placeholderCaFile } from '../../../test/support/placeholder-ca';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { describeRedis, redisEndpoint } from './redis-connection';
import { bullConnection, redisTransportOptions } from './redis.module';

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
});
