import { isLabel } from '@matchplane/domain';
import { parseStaticServers, type StaticServer } from '@matchplane/allocation';
import { parseRegions } from '@matchplane/config';

/**
 * The allocator's per-region settings (issue 14): `region=value` entries separated by ";", as
 * MATCH_WIDENING_BY_MODE, so a value may itself be a comma-separated list (STATIC_SERVERS_BY_REGION
 * gives each region a list in STATIC_SERVERS' own format). Throws naming the variable.
 */
export function parseRegionMap(variable: string, raw: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const item of raw.split(';')) {
    const entry = item.trim();
    const separator = entry.indexOf('=');
    const region = entry.slice(0, separator).trim();
    const value = entry.slice(separator + 1).trim();
    if (separator < 1 || !isLabel(region) || value === '') {
      throw new Error(`${variable}: "${entry}" is not region=value (entries separated by ";")`);
    }
    if (entries.has(region)) throw new Error(`${variable}: region ${region} is listed twice`);
    entries.set(region, value);
  }
  return entries;
}

/**
 * The static pool: STATIC_SERVERS (one pool serving any region: its servers carry no region) or
 * STATIC_SERVERS_BY_REGION (each server in its region). Server ids are unique across regions.
 */
export function staticPool(config: {
  readonly STATIC_SERVERS?: string | undefined;
  readonly STATIC_SERVERS_BY_REGION?: string | undefined;
}): StaticServer[] {
  if (config.STATIC_SERVERS !== undefined && config.STATIC_SERVERS_BY_REGION !== undefined) {
    throw new Error('set STATIC_SERVERS (any region) or STATIC_SERVERS_BY_REGION, not both');
  }
  if (config.STATIC_SERVERS_BY_REGION === undefined) {
    if (config.STATIC_SERVERS === undefined) {
      throw new Error('the static provider needs STATIC_SERVERS or STATIC_SERVERS_BY_REGION');
    }
    try {
      return parseStaticServers(config.STATIC_SERVERS);
    } catch (error) {
      throw new Error(`STATIC_SERVERS: ${(error as Error).message}`);
    }
  }
  const servers: StaticServer[] = [];
  const variable = 'STATIC_SERVERS_BY_REGION';
  for (const [region, list] of parseRegionMap(variable, config.STATIC_SERVERS_BY_REGION)) {
    try {
      servers.push(...parseStaticServers(list).map((server) => ({ ...server, region })));
    } catch (error) {
      throw new Error(`${variable}: region ${region}: ${(error as Error).message}`);
    }
  }
  const ids = new Set<string>();
  for (const server of servers) {
    if (ids.has(server.id)) throw new Error(`${variable}: server id ${server.id} is listed twice`);
    ids.add(server.id);
  }
  return servers;
}

/** One region's Agones fleet, and the cluster it runs in when not the default one. */
export interface AgonesRegion {
  readonly fleet: string;
  /** Kubernetes API URL of that region's cluster; undefined: AGONES_API_URL (or in-cluster). */
  readonly apiUrl?: string;
  /** Bearer token file for that API URL; undefined: AGONES_TOKEN_FILE. */
  readonly tokenFile?: string;
}

const FLEET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The Agones fleets by region (AGONES_FLEETS_BY_REGION, with AGONES_API_URLS_BY_REGION and
 * AGONES_TOKEN_FILES_BY_REGION for regions in their own cluster), or undefined when the one
 * AGONES_FLEET serves any region.
 */
export function agonesRegions(config: {
  readonly AGONES_FLEET?: string | undefined;
  readonly AGONES_FLEETS_BY_REGION?: string | undefined;
  readonly AGONES_API_URLS_BY_REGION?: string | undefined;
  readonly AGONES_TOKEN_FILES_BY_REGION?: string | undefined;
}): Map<string, AgonesRegion> | undefined {
  if (config.AGONES_FLEET !== undefined && config.AGONES_FLEETS_BY_REGION !== undefined) {
    throw new Error('set AGONES_FLEET (any region) or AGONES_FLEETS_BY_REGION, not both');
  }
  if (config.AGONES_FLEETS_BY_REGION === undefined) {
    if (config.AGONES_FLEET === undefined) {
      throw new Error('the agones provider needs AGONES_FLEET or AGONES_FLEETS_BY_REGION');
    }
    for (const variable of ['AGONES_API_URLS_BY_REGION', 'AGONES_TOKEN_FILES_BY_REGION'] as const) {
      if (config[variable] !== undefined) {
        throw new Error(
          `${variable} needs AGONES_FLEETS_BY_REGION (AGONES_FLEET serves any region)`,
        );
      }
    }
    return undefined;
  }
  const fleets = parseRegionMap('AGONES_FLEETS_BY_REGION', config.AGONES_FLEETS_BY_REGION);
  const apiUrls = optionalRegionMap('AGONES_API_URLS_BY_REGION', config.AGONES_API_URLS_BY_REGION);
  const tokenFiles = optionalRegionMap(
    'AGONES_TOKEN_FILES_BY_REGION',
    config.AGONES_TOKEN_FILES_BY_REGION,
  );
  for (const [variable, map] of [
    ['AGONES_API_URLS_BY_REGION', apiUrls],
    ['AGONES_TOKEN_FILES_BY_REGION', tokenFiles],
  ] as const) {
    for (const region of map.keys()) {
      if (!fleets.has(region)) {
        throw new Error(`${variable}: region ${region} has no fleet in AGONES_FLEETS_BY_REGION`);
      }
    }
  }
  const regions = new Map<string, AgonesRegion>();
  for (const [region, fleet] of fleets) {
    if (!FLEET_NAME.test(fleet)) {
      throw new Error(`AGONES_FLEETS_BY_REGION: "${fleet}" (region ${region}) is not a Fleet name`);
    }
    const apiUrl = apiUrls.get(region);
    if (apiUrl !== undefined && !/^https?:\/\/[^\s;]+$/.test(apiUrl)) {
      throw new Error(
        `AGONES_API_URLS_BY_REGION: "${apiUrl}" (region ${region}) is not an http(s) URL`,
      );
    }
    const tokenFile = tokenFiles.get(region);
    regions.set(region, {
      fleet,
      ...(apiUrl === undefined ? {} : { apiUrl }),
      ...(tokenFile === undefined ? {} : { tokenFile }),
    });
  }
  return regions;
}

function optionalRegionMap(variable: string, raw: string | undefined): Map<string, string> {
  return raw === undefined ? new Map<string, string>() : parseRegionMap(variable, raw);
}

/** LOCAL_SERVER_REGIONS as a list, or undefined when the local provider serves any region. */
export function localRegions(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : parseRegions(raw);
}
