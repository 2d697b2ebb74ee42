import { readFileSync } from 'node:fs';
import { ValidateBy, buildMessage } from 'class-validator';

/** One server of a list: a PostgreSQL host of DATABASE_HOST, a sentinel of REDIS_SENTINELS. */
export interface HostAndPort {
  readonly host: string;
  readonly port: number;
}

const BRACKETED = /^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$/;
const NAMED = /^([^\s,:[\]/]+)(?::(\d+))?$/;

function portOf(raw: string | undefined, fallback: number, entry: string): number {
  if (raw === undefined) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`"${entry}" has no port from 1 to 65535`);
  return port;
}

/**
 * "h1:5432,h2,[::1]:6543" -> hosts with their ports (a host without one takes `defaultPort`).
 * A bare IPv6 address (two colons or more, no brackets) is one host without a port, and so is a
 * Unix socket directory ("/var/run/postgresql", which node-postgres reads as such).
 */
export function parseHostList(raw: string, defaultPort: number): HostAndPort[] {
  const hosts = raw.split(',').map((item) => {
    const entry = item.trim();
    if (entry.startsWith('/')) return { host: entry, port: defaultPort };
    if ((entry.match(/:/g)?.length ?? 0) > 1 && !entry.startsWith('['))
      return { host: entry, port: defaultPort };
    const match = BRACKETED.exec(entry) ?? NAMED.exec(entry);
    if (!match?.[1]) throw new Error(`"${entry}" is not host or host:port`);
    return { host: match[1], port: portOf(match[2], defaultPort, entry) };
  });
  const keys = hosts.map(({ host, port }) => `${host}:${port}`);
  if (new Set(keys).size !== keys.length) throw new Error('a host is listed twice');
  return hosts;
}

/** "host:port" for messages and logs, IPv6 bracketed; never carries a credential. */
export function formatHosts(hosts: readonly HostAndPort[]): string {
  return hosts
    .map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`)
    .join(',');
}

/** The PostgreSQL servers DATABASE_HOST lists, in the order they are tried. */
export function databaseHosts(config: {
  readonly DATABASE_HOST: string;
  readonly DATABASE_PORT: number;
}): HostAndPort[] {
  return parseHostList(config.DATABASE_HOST, config.DATABASE_PORT);
}

/** "h1:5432,h2:5432/db": where the apps connect, for messages (no user, no password). */
export function databaseTarget(config: {
  readonly DATABASE_HOST: string;
  readonly DATABASE_PORT: number;
  readonly DATABASE_NAME: string;
}): string {
  return `${formatHosts(databaseHosts(config))}/${config.DATABASE_NAME}`;
}

/** Sentinel's own port, for a sentinel listed without one. */
export const SENTINEL_DEFAULT_PORT = 26379;

export function parseRedisSentinels(raw: string): HostAndPort[] {
  return parseHostList(raw, SENTINEL_DEFAULT_PORT);
}

/** A Redis server's own port, for a cluster node listed without one. */
export const REDIS_DEFAULT_PORT = 6379;

export function parseRedisClusterNodes(raw: string): HostAndPort[] {
  return parseHostList(raw, REDIS_DEFAULT_PORT);
}

/** Variables that name one server or a Sentinel group: meaningless beside REDIS_CLUSTER_NODES. */
const NOT_WITH_CLUSTER: Readonly<Record<string, string>> = {
  REDIS_URL:
    'names one server (and a database); give the credentials in REDIS_USERNAME and REDIS_PASSWORD and TLS in REDIS_TLS',
  REDIS_HOST: 'names one server; the cluster nodes give the addresses',
  REDIS_PORT: 'names one server; give each node its port in REDIS_CLUSTER_NODES',
  REDIS_SENTINELS: 'asks for Sentinel, a different topology: choose one',
  REDIS_SENTINEL_MASTER: 'asks for Sentinel, a different topology: choose one',
  REDIS_SENTINEL_PASSWORD: 'belongs to Sentinel, which a cluster does not use',
};

/**
 * Redis Cluster refuses every variable given that describes another topology, naming each (a
 * variable REDIS_URL filled is the URL's fault, named once).
 */
function clusterProblems(
  plain: Readonly<Record<string, string>>,
  origins: ReadonlyMap<string, string>,
): string[] {
  if (plain.REDIS_CLUSTER_NODES === undefined) return [];
  return Object.entries(NOT_WITH_CLUSTER)
    .filter(([variable]) => plain[variable] !== undefined && !origins.has(variable))
    .map(([variable, why]) => `${variable} is set with REDIS_CLUSTER_NODES: it ${why}`);
}

/** A file of PEM certificates (a CA bundle), read at start-up so a bad path stops the app there. */
export function IsCertificateFile(): PropertyDecorator {
  return ValidateBy({
    name: 'isCertificateFile',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return false;
        try {
          return readFileSync(value, 'utf8').includes('-----BEGIN CERTIFICATE-----');
        } catch {
          return false;
        }
      },
      defaultMessage: buildMessage(
        (prefix) => `${prefix}$property must be a readable PEM file holding a CA certificate`,
      ),
    },
  });
}

/**
 * Checks across the connection variables, on the raw values once the URLs are expanded (so a
 * value the URL gave is told from one set on its own, and a default from neither). `origins`
 * says which URL filled a variable.
 */
export function connectionTopologyProblems(
  plain: Readonly<Record<string, string>>,
  origins: ReadonlyMap<string, string>,
): string[] {
  const problems = clusterProblems(plain, origins);
  // A URL's own checks would only repeat the cluster's refusal of it.
  if (problems.length > 0) return problems;
  const given = (variable: string) =>
    origins.has(variable) ? `${variable} (from ${origins.get(variable)})` : variable;
  const sentinels = plain.REDIS_SENTINELS;
  const master = plain.REDIS_SENTINEL_MASTER;
  if (sentinels !== undefined && master === undefined)
    problems.push(
      'REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER is not: name the master the sentinels watch (their "sentinel monitor <name>")',
    );
  if (master !== undefined && sentinels === undefined)
    problems.push(
      'REDIS_SENTINEL_MASTER is set but REDIS_SENTINELS is not: list the sentinels to ask for that master, as host:port,host:port',
    );
  if (sentinels !== undefined && master !== undefined) {
    if (plain.REDIS_PORT !== undefined)
      problems.push(
        `${given('REDIS_PORT')} is set with REDIS_SENTINELS: the sentinels give the master's address, so leave the port out`,
      );
    if (plain.REDIS_HOST !== undefined && plain.REDIS_HOST !== master)
      problems.push(
        `${given('REDIS_HOST')} is "${plain.REDIS_HOST}" but REDIS_SENTINEL_MASTER is "${master}": with REDIS_SENTINELS the sentinels give the master's address, so the host, if set, must be the master name`,
      );
  }
  if (plain.REDIS_TLS_CA_FILE !== undefined && plain.REDIS_TLS !== 'true')
    problems.push(
      'REDIS_TLS_CA_FILE is set but Redis is not reached over TLS: use a rediss:// REDIS_URL or REDIS_TLS=true',
    );
  if (plain.REDIS_SENTINEL_PASSWORD !== undefined && sentinels === undefined)
    problems.push('REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not');
  const sslMode = plain.DATABASE_SSL_MODE ?? 'disable';
  if (plain.DATABASE_SSL_CA_FILE !== undefined && sslMode === 'disable')
    problems.push(
      `${given('DATABASE_SSL_CA_FILE')} is set but DATABASE_SSL_MODE is disable: set require, verify-ca or verify-full`,
    );
  if (sslMode === 'verify-ca' && plain.DATABASE_SSL_CA_FILE === undefined)
    problems.push(
      'DATABASE_SSL_MODE is verify-ca but DATABASE_SSL_CA_FILE is not set: verify-ca checks the server against that CA (use verify-full to check it against the system CAs and its name)',
    );
  return problems;
}
