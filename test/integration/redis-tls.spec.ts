import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import {
  bullConnection,
  createRedisConnection,
  createWakeUpConnection,
} from '@matchplane/persistence';
import { freePortFrom, makeScratch, PrivateRedis, removeScratch } from '../chaos/private-services';
import { makeCertificates } from '../support/tls-certificates';

const USER = 'matchplane';
const PASSWORD = 's3cret-acl-pw';

/**
 * A rediss:// URL with an ACL user and REDIS_TLS_CA_FILE reach a TLS-only port of a real
 * redis-server as that user, verified against that CA.
 */
describe('Redis over TLS as an ACL user', () => {
  let scratch: string;
  let redis: PrivateRedis | undefined;
  let tlsPort: number;
  let ca: string;

  beforeAll(async () => {
    scratch = makeScratch('matchplane-redis-tls-');
    const certificates = await makeCertificates(scratch);
    ca = certificates.ca;
    tlsPort = await freePortFrom(46420);
    redis = await PrivateRedis.create(scratch, 46410, 'redis-tls', () => [
      ...['--tls-port', String(tlsPort), '--tls-auth-clients', 'no'],
      ...['--tls-cert-file', certificates.cert, '--tls-key-file', certificates.key],
      ...['--tls-ca-cert-file', certificates.ca],
      ...['--user', USER, 'on', `>${PASSWORD}`, '~*', '&*', '+@all'],
    ]);
  });

  afterAll(async () => {
    await redis?.destroy();
    removeScratch(scratch);
  });

  it('connects the stores and BullMQ over TLS as the URL user', async () => {
    const config = loadConfig(ServiceConfig, {
      REDIS_URL: `rediss://${USER}:${PASSWORD}@localhost:${tlsPort}`,
      REDIS_TLS_CA_FILE: ca,
      REDIS_KEY_PREFIX: 'mp_tls',
    });
    const store = createRedisConnection(config, new Logger('Redis'), 'tls-test');
    try {
      expect(await store.call('ACL', 'WHOAMI')).toBe(USER);
      const tls = (await store.call('CLIENT', 'INFO')) as string;
      expect(tls).toContain(`laddr=127.0.0.1:${tlsPort}`);
    } finally {
      await store.quit();
    }
    const queue = new Queue('tls-test', {
      connection: bullConnection(config),
      prefix: config.REDIS_KEY_PREFIX,
    });
    try {
      const job = await queue.add('job', { n: 1 });
      expect(await queue.getJob(job.id!)).toBeDefined();
    } finally {
      await queue.close();
    }
  });

  it.each([
    ['without the CA file (the system CAs do not know this one)', { REDIS_TLS_CA_FILE: '' }],
    ['with a wrong password', { REDIS_URL: `rediss://${USER}:wrong@localhost:PORT` }],
  ])('is refused %s', async (_, change) => {
    const env: Record<string, string> = {
      REDIS_URL: `rediss://${USER}:${PASSWORD}@localhost:${tlsPort}`,
      REDIS_TLS_CA_FILE: ca,
      ...change,
    };
    env.REDIS_URL = env.REDIS_URL!.replace('PORT', String(tlsPort));
    const wakeUps = createWakeUpConnection(loadConfig(ServiceConfig, env), 'tls-refused');
    const ended = new Promise((resolve) => wakeUps.once('end', resolve));
    try {
      await expect(wakeUps.ping()).rejects.toThrow();
    } finally {
      wakeUps.disconnect();
      await ended;
    }
  });
});
