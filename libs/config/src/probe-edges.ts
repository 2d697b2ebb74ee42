import { parseRegions } from './queue-policy';

/** One region's probe edge endpoints, as PROBE_EDGES lists them (http(s):// and udp:// URLs). */
export interface RegionProbeEdges {
  readonly region: string;
  readonly endpoints: readonly string[];
}

const ENDPOINT_PROTOCOLS = new Set(['http:', 'https:', 'udp:']);

/**
 * "eu-west=http://10.0.0.5:7001|udp://10.0.0.5:7002,us-east=..." -> each region's endpoints, in
 * order. Throws one clear message on a malformed list, a region listed twice or a bad URL. Checked
 * against PROBE_REGIONS by the app (a region no one queues for is a mistake).
 */
export function parseProbeEdges(raw: string): RegionProbeEdges[] {
  const edges = raw.split(',').map((item) => {
    const separator = item.indexOf('=');
    if (separator <= 0) throw new Error(`"${item.trim()}" is not <region>=<url>|<url>...`);
    const [region] = parseRegions(item.slice(0, separator));
    const endpoints = item
      .slice(separator + 1)
      .split('|')
      .map((url) => url.trim());
    for (const endpoint of endpoints) {
      let url: URL;
      try {
        url = new URL(endpoint);
      } catch {
        throw new Error(`"${endpoint}" (${region}) is not a URL`);
      }
      if (!ENDPOINT_PROTOCOLS.has(url.protocol) || url.port === '' || url.hostname === '') {
        throw new Error(`"${endpoint}" (${region}) must be http://, https:// or udp://host:port`);
      }
    }
    return { region: region!, endpoints };
  });
  if (new Set(edges.map((edge) => edge.region)).size !== edges.length) {
    throw new Error('a region is listed twice');
  }
  return edges;
}
