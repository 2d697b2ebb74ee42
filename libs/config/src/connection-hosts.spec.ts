import { placeholderCaFile } from '../../../test/support/placeholder-ca';
import {
  databaseHosts,
  databaseTarget,
  parseHostList,
  parseRedisClusterNodes,
} from './connection-hosts';
import { configProblems } from '../../../test/support/config-problems';
import { loadConfig, redactedConfig } from './load-config';
import { redisKeyPrefix, ServiceConfig } from './service.config';

function problemsOf(env: Record<string, string>): string[] {
  return configProblems(ServiceConfig, env);
}

describe('highly available connections', () => {
  const caFile = placeholderCaFile();

  describe('PostgreSQL', () => {
    it('reads a multi-host DATABASE_URL and its libpq options into the separate variables', () => {
      const config = loadConfig(ServiceConfig, {
        DATABASE_URL: `postgresql://app:hunter22@pg-1:5432,pg-2,[fd00::3]:6543/mp?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}&options=-c%20statement_timeout%3D30000&application_name=mp-eu`,
      });
      expect(config).toMatchObject({
        DATABASE_HOST: 'pg-1:5432,pg-2,[fd00::3]:6543',
        DATABASE_PORT: 5432,
        DATABASE_NAME: 'mp',
        DATABASE_TARGET_SESSION_ATTRS: 'read-write',
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_CA_FILE: caFile,
        DATABASE_OPTIONS: '-c statement_timeout=30000',
        DATABASE_APPLICATION_NAME: 'mp-eu',
      });
      expect(databaseHosts(config)).toEqual([
        { host: 'pg-1', port: 5432 },
        { host: 'pg-2', port: 5432 },
        { host: 'fd00::3', port: 6543 },
      ]);
      expect(databaseTarget(config)).toBe('pg-1:5432,pg-2:5432,[fd00::3]:6543/mp');
      expect(JSON.stringify(redactedConfig(config))).not.toContain('hunter22');
    });

    it('give a listed host without a port DATABASE_PORT', () => {
      const config = loadConfig(ServiceConfig, {
        DATABASE_HOST: 'pg-1,pg-2:5433',
        DATABASE_PORT: '6000',
      });
      expect(databaseHosts(config)).toEqual([
        { host: 'pg-1', port: 6000 },
        { host: 'pg-2', port: 5433 },
      ]);
    });

    it.each([
      [
        'a standby-only target',
        { DATABASE_URL: 'postgres://app@pg-1,pg-2/mp?target_session_attrs=standby' },
        'DATABASE_TARGET_SESSION_ATTRS must be one of any, read-write, primary (got "standby" from DATABASE_URL)',
      ],
      [
        'an sslmode that falls back to plain text',
        { DATABASE_SSL_MODE: 'prefer' },
        'DATABASE_SSL_MODE must be one of disable, require, verify-ca, verify-full (prefer and allow would fall back to plain text, which node-postgres does not do) (got "prefer")',
      ],
      [
        'a CA file without TLS',
        { DATABASE_URL: `postgres://app@pg/mp?sslrootcert=${encodeURIComponent(caFile)}` },
        'DATABASE_SSL_CA_FILE (from DATABASE_URL) is set but DATABASE_SSL_MODE is disable: set require, verify-ca or verify-full',
      ],
      [
        'verify-ca without a CA',
        { DATABASE_SSL_MODE: 'verify-ca' },
        'DATABASE_SSL_MODE is verify-ca but DATABASE_SSL_CA_FILE is not set: verify-ca checks the server against that CA (use verify-full to check it against the system CAs and its name)',
      ],
      [
        'a CA file that is not there',
        { DATABASE_SSL_MODE: 'require', DATABASE_SSL_CA_FILE: '/nonexistent/ca.pem' },
        'DATABASE_SSL_CA_FILE must be a readable PEM file holding a CA certificate (got "/nonexistent/ca.pem")',
      ],
      [
        'session options that are not -c settings',
        { DATABASE_OPTIONS: 'statement_timeout=5s' },
        'DATABASE_OPTIONS must be -c name=value entries separated by spaces (got "statement_timeout=5s")',
      ],
      [
        'a host listed twice',
        { DATABASE_HOST: 'pg-1:5432,pg-1' },
        'DATABASE_HOST must be a host or a comma-separated list of host[:port] entries, e.g. pg-1,pg-2:5433 (a host is listed twice) (got "pg-1:5432,pg-1")',
      ],
    ])('refuse %s', (_, env, expected) => {
      expect(problemsOf(env)).toEqual([expected]);
    });
  });

  describe('Redis', () => {
    it('reads an ACL user and TLS from a rediss:// URL, the password kept secret', () => {
      const config = loadConfig(ServiceConfig, {
        REDIS_URL: 'rediss://matchplane:hunter22@cache.internal:6380',
        REDIS_TLS_CA_FILE: caFile,
      });
      expect(config).toMatchObject({
        REDIS_HOST: 'cache.internal',
        REDIS_PORT: 6380,
        REDIS_USERNAME: 'matchplane',
        REDIS_PASSWORD: 'hunter22',
        REDIS_TLS: true,
        REDIS_TLS_CA_FILE: caFile,
      });
      expect(JSON.stringify(redactedConfig(config))).not.toContain('hunter22');
    });

    it('reads a Sentinel group, a URL carrying only the credentials and the master name as its host', () => {
      const config = loadConfig(ServiceConfig, {
        REDIS_SENTINELS: 'sentinel-1:26379,sentinel-2,[::1]:26380',
        REDIS_SENTINEL_MASTER: 'mp-main',
        REDIS_URL: 'redis://matchplane:hunter22@mp-main',
        REDIS_SENTINEL_PASSWORD: 'hunter23',
      });
      expect(config).toMatchObject({
        REDIS_SENTINEL_MASTER: 'mp-main',
        REDIS_USERNAME: 'matchplane',
        REDIS_TLS: false,
      });
      const view = JSON.stringify(redactedConfig(config));
      expect(view).not.toContain('hunter22');
      expect(view).not.toContain('hunter23');
    });

    it.each([
      [
        'sentinels without a master name',
        { REDIS_SENTINELS: 'sentinel-1:26379' },
        'REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER is not: name the master the sentinels watch (their "sentinel monitor <name>")',
      ],
      [
        'a master name without sentinels',
        { REDIS_SENTINEL_MASTER: 'mp-main' },
        'REDIS_SENTINEL_MASTER is set but REDIS_SENTINELS is not: list the sentinels to ask for that master, as host:port,host:port',
      ],
      [
        'a REDIS_URL host that is not the master name',
        {
          REDIS_SENTINELS: 'sentinel-1',
          REDIS_SENTINEL_MASTER: 'mp-main',
          REDIS_URL: 'redis://:hunter22@cache.internal',
        },
        'REDIS_HOST (from REDIS_URL) is "cache.internal" but REDIS_SENTINEL_MASTER is "mp-main": with REDIS_SENTINELS the sentinels give the master\'s address, so the host, if set, must be the master name',
      ],
      [
        'a REDIS_URL port beside sentinels',
        {
          REDIS_SENTINELS: 'sentinel-1',
          REDIS_SENTINEL_MASTER: 'mp-main',
          REDIS_URL: 'redis://:hunter22@mp-main:6379',
        },
        "REDIS_PORT (from REDIS_URL) is set with REDIS_SENTINELS: the sentinels give the master's address, so leave the port out",
      ],
      [
        'a REDIS_HOST beside sentinels',
        { REDIS_SENTINELS: 'sentinel-1', REDIS_SENTINEL_MASTER: 'mp-main', REDIS_HOST: '10.0.0.5' },
        'REDIS_HOST is "10.0.0.5" but REDIS_SENTINEL_MASTER is "mp-main": with REDIS_SENTINELS the sentinels give the master\'s address, so the host, if set, must be the master name',
      ],
      [
        'a malformed sentinel list',
        { REDIS_SENTINELS: 'sentinel-1:26379;sentinel-2', REDIS_SENTINEL_MASTER: 'mp-main' },
        'REDIS_SENTINELS must be a comma-separated list of host[:port] entries, e.g. sentinel-1:26379,sentinel-2:26379 ("sentinel-1:26379;sentinel-2" is not host or host:port) (got "sentinel-1:26379;sentinel-2")',
      ],
      [
        'a CA file without TLS',
        { REDIS_URL: 'redis://cache:6379', REDIS_TLS_CA_FILE: caFile },
        'REDIS_TLS_CA_FILE is set but Redis is not reached over TLS: use a rediss:// REDIS_URL or REDIS_TLS=true',
      ],
      [
        'REDIS_TLS=true beside a redis:// URL',
        { REDIS_URL: 'redis://cache:6379', REDIS_TLS: 'true' },
        'REDIS_TLS disagrees with REDIS_URL: set one or the other, or the same value in both (got "true", the URL says "false")',
      ],
      [
        'a sentinel password without sentinels',
        { REDIS_SENTINEL_PASSWORD: 'hunter22' },
        'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not',
      ],
    ])('refuse %s, showing no password', (_, env, expected) => {
      const problems = problemsOf(env);
      expect(problems).toEqual([expected]);
      expect(problems.join()).not.toContain('hunter');
    });
  });

  describe('Redis Cluster', () => {
    it('reads the cluster nodes, with credentials and TLS from their own variables', () => {
      const config = loadConfig(ServiceConfig, {
        REDIS_CLUSTER_NODES: 'redis-1:7000,redis-2,[fd00::3]:7002',
        REDIS_USERNAME: 'matchplane',
        REDIS_PASSWORD: 'hunter22',
        REDIS_TLS: 'true',
      });
      expect(parseRedisClusterNodes(config.REDIS_CLUSTER_NODES ?? '')).toEqual([
        { host: 'redis-1', port: 7000 },
        { host: 'redis-2', port: 6379 },
        { host: 'fd00::3', port: 7002 },
      ]);
      expect(redisKeyPrefix(config)).toBe('{mp}');
      expect(redisKeyPrefix(loadConfig(ServiceConfig, {}))).toBe('mp');
      expect(JSON.stringify(redactedConfig(config))).not.toContain('hunter22');
    });

    it.each([
      [
        'a REDIS_URL (one server, perhaps a database index)',
        { REDIS_CLUSTER_NODES: 'redis-1:7000', REDIS_URL: 'redis://:hunter22@redis-1:7000/0' },
        [
          'REDIS_URL is set with REDIS_CLUSTER_NODES: it names one server (and a database); give the credentials in REDIS_USERNAME and REDIS_PASSWORD and TLS in REDIS_TLS',
        ],
      ],
      [
        'sentinels',
        {
          REDIS_CLUSTER_NODES: 'redis-1:7000',
          REDIS_SENTINELS: 'sentinel-1',
          REDIS_SENTINEL_MASTER: 'mp-main',
        },
        [
          'REDIS_SENTINELS is set with REDIS_CLUSTER_NODES: it asks for Sentinel, a different topology: choose one',
          'REDIS_SENTINEL_MASTER is set with REDIS_CLUSTER_NODES: it asks for Sentinel, a different topology: choose one',
        ],
      ],
      [
        'a REDIS_HOST and REDIS_PORT',
        { REDIS_CLUSTER_NODES: 'redis-1:7000', REDIS_HOST: 'redis-1', REDIS_PORT: '7000' },
        [
          'REDIS_HOST is set with REDIS_CLUSTER_NODES: it names one server; the cluster nodes give the addresses',
          'REDIS_PORT is set with REDIS_CLUSTER_NODES: it names one server; give each node its port in REDIS_CLUSTER_NODES',
        ],
      ],
      [
        'a sentinel password',
        { REDIS_CLUSTER_NODES: 'redis-1:7000', REDIS_SENTINEL_PASSWORD: 'hunter22' },
        [
          'REDIS_SENTINEL_PASSWORD is set with REDIS_CLUSTER_NODES: it belongs to Sentinel, which a cluster does not use',
        ],
      ],
      [
        'a malformed node list',
        { REDIS_CLUSTER_NODES: 'redis-1:7000;redis-2' },
        [
          'REDIS_CLUSTER_NODES must be a comma-separated list of host[:port] entries, e.g. redis-1:6379,redis-2:6379 ("redis-1:7000;redis-2" is not host or host:port) (got "redis-1:7000;redis-2")',
        ],
      ],
    ])('refuse cluster nodes beside %s, showing no password', (_, env, expected) => {
      const problems = problemsOf(env);
      expect(problems).toEqual(expected);
      expect(problems.join()).not.toContain('hunter');
    });
  });

  it.each([
    ['fd00::1', [{ host: 'fd00::1', port: 5432 }]],
    [
      '[fd00::1]:6000,db',
      [
        { host: 'fd00::1', port: 6000 },
        { host: 'db', port: 5432 },
      ],
    ],
  ])('parseHostList reads %s', (raw, expected) => {
    expect(parseHostList(raw, 5432)).toEqual(expected);
  });

  it.each(['db:0', 'db:70000', 'db:x', 'a b', ''])('parseHostList refuses "%s"', (raw) => {
    expect(() => parseHostList(raw, 5432)).toThrow();
  });
});
