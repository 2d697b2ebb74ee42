import { Logger } from '@nestjs/common';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { createRedisConnection } from '@matchplane/persistence';
import { makeScratch, removeScratch, run } from '../chaos/private-services';
import { RedisSentinelGroup, SENTINEL_MASTER } from '../support/redis-sentinel-group';
import { makeCertificates, type Certificates } from '../support/tls-certificates';

const PREFIX = 'mp_sentinel_tls';

async function on(port: number, ...command: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...command])).trim();
}

/**
 * REDIS_TLS and REDIS_TLS_CA_FILE beside REDIS_SENTINELS: the sentinel is asked over TLS, and
 * the master it names is reached over TLS, before and after a failover.
 */
describe('Redis through Sentinel over TLS', () => {
  let scratch: string;
  let certificates: Certificates;
  let group: RedisSentinelGroup | undefined;

  beforeAll(async () => {
    scratch = makeScratch('matchplane-sentinel-tls-');
    certificates = await makeCertificates(scratch);
    group = await RedisSentinelGroup.create(scratch, certificates);
  });

  afterAll(async () => {
    await group?.destroy();
    removeScratch(scratch);
  });

  it('reaches the master on its TLS port, verified with the CA file, and the new one after a failover', async () => {
    const sentinels = group!;
    const config = loadConfig(ServiceConfig, {
      REDIS_SENTINELS: `127.0.0.1:${sentinels.sentinelServicePort}`,
      REDIS_SENTINEL_MASTER: SENTINEL_MASTER,
      REDIS_TLS: 'true',
      REDIS_TLS_CA_FILE: certificates.ca,
      REDIS_KEY_PREFIX: PREFIX,
    });
    const store = createRedisConnection(config, new Logger('Redis'), 'sentinel-tls-test');
    try {
      await store.set(`${PREFIX}:before`, '1');
      expect(await on(sentinels.master.redis.port, 'GET', `${PREFIX}:before`)).toBe('1');
      expect(await store.call('CLIENT', 'INFO')).toContain(
        `laddr=127.0.0.1:${sentinels.master.servicePort}`,
      );

      await sentinels.failover();

      await store.set(`${PREFIX}:after`, '2');
      expect(await on(sentinels.replica.redis.port, 'GET', `${PREFIX}:after`)).toBe('2');
      expect(await store.call('CLIENT', 'INFO')).toContain(
        `laddr=127.0.0.1:${sentinels.replica.servicePort}`,
      );
    } finally {
      store.disconnect();
    }
  });
});
