export interface StaticServer {
  readonly id: string;
  readonly host: string;
  readonly port: number;
  /** The region it runs in; undefined for a pool that serves any region (STATIC_SERVERS). */
  readonly region?: string;
}

/** "gs-1=10.0.0.5:7777,gs-2=10.0.0.6:7777" -> the pool; throws on a malformed or repeated entry. */
export function parseStaticServers(raw: string): StaticServer[] {
  const servers = raw.split(',').map((item) => {
    const entry = item.trim();
    const separator = entry.indexOf('=');
    const colon = entry.lastIndexOf(':');
    const id = entry.slice(0, separator);
    const host = entry.slice(separator + 1, colon);
    const port = Number(entry.slice(colon + 1));
    if (
      separator < 1 ||
      colon <= separator + 1 ||
      !Number.isInteger(port) ||
      port < 1 ||
      port > 65_535
    ) {
      throw new Error(`"${entry}" is not id=host:port`);
    }
    return { id, host, port };
  });
  const ids = new Set(servers.map((server) => server.id));
  if (ids.size !== servers.length) throw new Error('a server id is listed twice');
  return servers;
}

export function staticEndpoint(server: StaticServer): string {
  return `${server.host}:${server.port}`;
}
