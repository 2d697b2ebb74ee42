import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import {
  formatHosts,
  parseRedisClusterNodes,
  type HostAndPort,
  parseRedisSentinels,
  type RedisConnectionConfig,
} from '@matchplane/config';

/**
 * Under Sentinel, a command a demoted master refused (READONLY, between the promotion of a replica
 * and Sentinel's disconnecting the old master's clients): reconnect, asking the sentinels again
 * (ioredis keeps only a server that says it is master), and resend it. A refused write was not
 * applied, so resending it cannot apply it twice.
 */
function resendOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/**
 * At a fixed address (a DNS name a managed service moves to the new master), reconnect but fail
 * the command: resending it to an address that stays a replica would retry it for ever.
 */
function reconnectOnReadOnly(error: Error): boolean {
  return error.message.startsWith('READONLY');
}

function tlsOptions(config: RedisConnectionConfig): ConnectionOptions {
  return config.REDIS_TLS_CA_FILE === undefined
    ? {}
    : { ca: readFileSync(config.REDIS_TLS_CA_FILE, 'utf8') };
}

/** The ioredis options that say where Redis is and how to reach it (no behaviour: no retries). */
export type RedisEndpoint = Pick<
  RedisOptions,
  | 'host'
  | 'port'
  | 'username'
  | 'password'
  | 'tls'
  | 'sentinels'
  | 'name'
  | 'sentinelPassword'
  | 'sentinelTLS'
  | 'enableTLSForSentinelMode'
  | 'reconnectOnError'
>;

/**
 * Where Redis is and how to reach it, as ioredis options: the one description every Redis
 * connection of the apps spreads (the stores' connection, BullMQ's, the microservices transport's
 * and the subscribers duplicated from them), so under Sentinel all of them follow the master.
 */
export function redisEndpoint(config: RedisConnectionConfig): RedisEndpoint {
  const credentials = {
    ...(config.REDIS_USERNAME === undefined ? {} : { username: config.REDIS_USERNAME }),
    ...(config.REDIS_PASSWORD === undefined ? {} : { password: config.REDIS_PASSWORD }),
  };
  if (config.REDIS_SENTINELS !== undefined && config.REDIS_SENTINEL_MASTER !== undefined) {
    const tls = tlsOptions(config);
    return {
      sentinels: parseRedisSentinels(config.REDIS_SENTINELS),
      name: config.REDIS_SENTINEL_MASTER,
      ...(config.REDIS_SENTINEL_PASSWORD === undefined
        ? {}
        : { sentinelPassword: config.REDIS_SENTINEL_PASSWORD }),
      // TLS to the sentinels and to the master they name alike, with one CA.
      ...(config.REDIS_TLS ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
      ...credentials,
      reconnectOnError: resendOnReadOnly,
    };
  }
  return {
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    ...(config.REDIS_TLS ? { tls: tlsOptions(config) } : {}),
    ...credentials,
    reconnectOnError: reconnectOnReadOnly,
  };
}

/** The cluster's seed nodes (REDIS_CLUSTER_NODES), or undefined when Redis is not a cluster. */
export function redisClusterNodes(config: RedisConnectionConfig): HostAndPort[] | undefined {
  return config.REDIS_CLUSTER_NODES === undefined
    ? undefined
    : parseRedisClusterNodes(config.REDIS_CLUSTER_NODES);
}

/**
 * A cluster's options: each node is reached with the credentials and TLS of a single server, and
 * `node` adds per-connection behaviour (name, retries). With TLS, node addresses are used as
 * given rather than resolved, so a certificate issued for a name still matches.
 */
export function redisClusterOptions(
  config: RedisConnectionConfig,
  node: RedisOptions,
  cluster: ClusterOptions = {},
): ClusterOptions {
  const {
    host: _host,
    port: _port,
    reconnectOnError: _ignored,
    ...endpoint
  } = redisEndpoint(config);
  return {
    ...cluster,
    redisOptions: { ...endpoint, ...node },
    ...(config.REDIS_TLS ? { dnsLookup: (address, lookedUp) => lookedUp(null, address) } : {}),
  };
}

/** Which Redis, for log lines: never a credential. */
export function describeRedis(config: RedisConnectionConfig): string {
  const scheme = config.REDIS_TLS ? ' over TLS' : '';
  const nodes = redisClusterNodes(config);
  if (nodes !== undefined) return `Redis Cluster${scheme} (nodes ${formatHosts(nodes)})`;
  if (config.REDIS_SENTINELS !== undefined && config.REDIS_SENTINEL_MASTER !== undefined)
    return `Redis master "${config.REDIS_SENTINEL_MASTER}"${scheme} (sentinels ${formatHosts(parseRedisSentinels(config.REDIS_SENTINELS))})`;
  return `Redis at ${formatHosts([{ host: config.REDIS_HOST, port: config.REDIS_PORT }])}${scheme}`;
}
