import {
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  ValidateIf,
} from 'class-validator';
import {
  EnvVar,
  IsIntInRange,
  IsParsedList,
  parseRegions,
  WorkerConfig,
  healthPort,
} from '@matchplane/config';
import { agonesRegions, localRegions, staticPool } from './allocation-regions';

export const ALLOCATION_PROVIDERS = ['local', 'static', 'agones'] as const;
export type AllocationProviderName = (typeof ALLOCATION_PROVIDERS)[number];

/** The allocator's steps, in order (ALLOCATOR_EXIT_AFTER_STEP names one). */
export const ALLOCATION_STEPS = ['allocated', 'persisted', 'published', 'handed-off'] as const;
export type AllocationStep = (typeof ALLOCATION_STEPS)[number];

/** What happens when a match's region has no free server (ALLOCATION_REGION_FALLBACK). */
export const REGION_FALLBACK_POLICIES = ['nearest', 'none'] as const;
export type RegionFallbackPolicy = (typeof REGION_FALLBACK_POLICIES)[number];

export class AllocatorConfig extends WorkerConfig {
  /** ServiceConfig's checks (MATCHER_SHARDS), then this app's. */
  static override crossVariableProblems(config: AllocatorConfig): string[] {
    return [
      ...super.crossVariableProblems(config),
      ...AllocatorConfig.providerRegionProblems(config),
    ];
  }

  /** The chosen provider's per-region settings parse, and name only regions PROBE_REGIONS lists. */
  private static providerRegionProblems(config: AllocatorConfig): string[] {
    let regions: readonly string[] | undefined;
    try {
      switch (config.ALLOCATION_PROVIDER) {
        case 'static': {
          const servers = staticPool(config);
          regions = servers.some((server) => server.region !== undefined)
            ? servers.map((server) => server.region ?? '')
            : undefined;
          break;
        }
        case 'agones': {
          const fleets = agonesRegions(config);
          regions = fleets ? [...fleets.keys()] : undefined;
          break;
        }
        case 'local':
          regions = localRegions(config.LOCAL_SERVER_REGIONS);
          break;
      }
    } catch (error) {
      return [(error as Error).message];
    }
    const known = new Set(parseRegions(config.PROBE_REGIONS));
    const unknown = [...new Set(regions ?? [])].filter((region) => !known.has(region));
    return unknown.length === 0
      ? []
      : [
          `the ${config.ALLOCATION_PROVIDER} provider's regions name ${unknown.join(', ')}, which PROBE_REGIONS (${config.PROBE_REGIONS}) does not list: no match is ever formed there`,
        ];
  }

  @healthPort()
  HEALTH_PORT = 9103;

  @EnvVar({
    description:
      'Join-key set the allocator signs with: a JSON map {keyId: base64Key} (or a raw key file, id ""). The same Secret is mounted into every game server. Required: the allocator refuses to start without usable key material',
  })
  @IsString()
  @IsNotEmpty({
    message: 'must be the path of the join key file (the allocator cannot sign without it)',
  })
  JOIN_KEYS_FILE = '';

  @EnvVar({
    description:
      'Key id new join tokens and roster manifests are signed with; must be in JOIN_KEYS_FILE. Required for a key map; unset for a raw key file (id "")',
  })
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'must be 1-64 visible ASCII characters' })
  JOIN_ACTIVE_KEY_ID?: string = undefined;

  @EnvVar({
    description:
      'Lifetime of a join token and of the assignment it authorises, from publication (ms)',
  })
  @IsIntInRange(10_000, 86_400_000)
  JOIN_TOKEN_TTL_MS = 600_000;

  @EnvVar({
    description:
      'Where game servers come from: local (child processes), static (a fixed pool) or agones',
  })
  @IsIn(ALLOCATION_PROVIDERS)
  ALLOCATION_PROVIDER: AllocationProviderName = 'local';

  @EnvVar({
    description: 'Base URL of the Matchplane API as game servers reach it (handed to each server)',
  })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  ALLOCATOR_API_URL = 'http://127.0.0.1:3000';

  @EnvVar({
    description:
      'Attempts at allocating one match (each one resumes where the last stopped) before the match fails with ALLOCATION_FAILED',
  })
  @IsIntInRange(1, 100)
  ALLOCATION_MAX_ATTEMPTS = 5;

  @EnvVar({
    description:
      'How often the allocator asks its provider for the servers it reports unhealthy (Agones: GameServer state Unhealthy), failing their matches SERVER_LOST (ms; 0 turns it off; providers that cannot tell are not asked)',
  })
  @IsIntInRange(0, 3_600_000)
  PROVIDER_HEALTH_POLL_MS = 2_000;

  @EnvVar({
    description:
      'First retry delay of a failed allocation attempt; doubles per attempt, jittered (ms)',
  })
  @IsIntInRange(0, 600_000)
  ALLOCATION_RETRY_BASE_MS = 500;

  @EnvVar({ description: 'Largest retry delay of a failed allocation attempt (ms)' })
  @IsIntInRange(0, 3_600_000)
  ALLOCATION_RETRY_CAP_MS = 30_000;

  @EnvVar({
    description:
      "When a match's region has no free server: nearest (the next-best region for its players by their measured RTT, within ALLOCATION_FALLBACK_MAX_RTT_MS) or none (the attempt fails; after ALLOCATION_MAX_ATTEMPTS the match fails ALLOCATION_FAILED and its tickets are requeued at their priority). Only a provider configured per region can fall back",
  })
  @IsIn(REGION_FALLBACK_POLICIES)
  ALLOCATION_REGION_FALLBACK: RegionFallbackPolicy = 'nearest';

  @EnvVar({
    description:
      'nearest fallback: a region qualifies only if every player of the match measured it, and none at more than this RTT (ms)',
  })
  @IsIntInRange(1, 10_000)
  ALLOCATION_FALLBACK_MAX_RTT_MS = 150;

  @EnvVar({ description: 'Allocations one allocator process works on at once' })
  @IsIntInRange(1, 1_000)
  ALLOCATOR_CONCURRENCY = 16;

  @EnvVar({
    description:
      'Lock on a running allocation job: a job whose allocator died is taken over after about this long (ms)',
  })
  @IsIntInRange(1_000, 600_000)
  ALLOCATION_LOCK_MS = 30_000;

  @EnvVar({ description: 'local provider: the game-server entrypoint it runs with this Node.js' })
  @IsString()
  @IsNotEmpty()
  LOCAL_SERVER_ENTRY = 'dist/apps/game-server/src/main.js';

  @EnvVar({
    description: 'local provider: address the launched game servers bind and players connect to',
  })
  @IsString()
  @IsNotEmpty()
  LOCAL_SERVER_HOST = '127.0.0.1';

  @EnvVar({
    description:
      "local provider: the launched servers' output: inherit (the allocator's) or ignore",
  })
  @IsIn(['inherit', 'ignore'])
  LOCAL_SERVER_OUTPUT: 'inherit' | 'ignore' = 'inherit';

  @EnvVar({
    description:
      'local provider: extra environment of the launched servers, comma-separated KEY=VALUE (e.g. CONNECT_DEADLINE_MS=3000)',
  })
  @IsOptional()
  @Matches(/^[A-Z_][A-Z0-9_]*=[^,]*(,[A-Z_][A-Z0-9_]*=[^,]*)*$/, {
    message: 'must be comma-separated KEY=VALUE pairs',
  })
  LOCAL_SERVER_ENV?: string = undefined;

  @EnvVar({
    description:
      'local provider: the regions it launches servers for, comma-separated (each server is labelled with its region); unset: any region',
  })
  @IsOptional()
  @IsParsedList(parseRegions, 'comma-separated region names, e.g. eu-west,us-east')
  LOCAL_SERVER_REGIONS?: string = undefined;

  @EnvVar({
    description:
      'static provider: one pool serving any region, comma-separated id=host:port entries (static needs this or STATIC_SERVERS_BY_REGION)',
  })
  @ValidateIf(
    (config: AllocatorConfig) =>
      config.ALLOCATION_PROVIDER === 'static' && config.STATIC_SERVERS !== undefined,
  )
  @Matches(/^[A-Za-z0-9._-]{1,255}=[^,=\s]+:\d{1,5}(,[A-Za-z0-9._-]{1,255}=[^,=\s]+:\d{1,5})*$/, {
    message: 'must be comma-separated id=host:port entries when ALLOCATION_PROVIDER=static',
  })
  STATIC_SERVERS?: string = undefined;

  @EnvVar({
    description:
      'static provider: a pool per region, ";"-separated region=servers entries whose servers are as in STATIC_SERVERS, e.g. eu-west=gs-1=10.0.0.5:7777,gs-2=10.0.0.6:7777;us-east=gs-3=10.1.0.5:7777',
  })
  @IsOptional()
  @IsString()
  STATIC_SERVERS_BY_REGION?: string = undefined;

  @EnvVar({
    description:
      'static provider: URL a pooled server is handed its match and credential at (POST, JSON); {id}, {host} and {port} are replaced (required for static)',
  })
  @ValidateIf((config: AllocatorConfig) => config.ALLOCATION_PROVIDER === 'static')
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'must be an http(s) URL template when ALLOCATION_PROVIDER=static',
  })
  STATIC_HANDOFF_URL?: string = undefined;

  @EnvVar({ description: 'agones provider: Kubernetes API URL; unset: in-cluster service account' })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  AGONES_API_URL?: string = undefined;

  @EnvVar({
    description:
      'agones provider: file holding the bearer token for AGONES_API_URL (unset: no token)',
  })
  @IsOptional()
  @IsString()
  AGONES_TOKEN_FILE?: string = undefined;

  @EnvVar({ description: 'agones provider: namespace of the Fleet and its GameServers' })
  @Matches(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, {
    message: 'must be a Kubernetes namespace name',
  })
  AGONES_NAMESPACE = 'default';

  @EnvVar({
    description:
      'agones provider: the one Fleet allocated from for any region (agones needs this or AGONES_FLEETS_BY_REGION)',
  })
  @ValidateIf(
    (config: AllocatorConfig) =>
      config.ALLOCATION_PROVIDER === 'agones' && config.AGONES_FLEET !== undefined,
  )
  @Matches(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, {
    message: 'must be a Fleet name when ALLOCATION_PROVIDER=agones',
  })
  AGONES_FLEET?: string = undefined;

  @EnvVar({
    description:
      'agones provider: the Fleet of each region, ";"-separated region=fleet entries, e.g. eu-west=gs-eu;us-east=gs-us',
  })
  @IsOptional()
  @IsString()
  AGONES_FLEETS_BY_REGION?: string = undefined;

  @EnvVar({
    description:
      "agones provider: the Kubernetes API URL of a region whose Fleet runs in another cluster, ';'-separated region=url entries (a region not listed: AGONES_API_URL)",
  })
  @IsOptional()
  @IsString()
  AGONES_API_URLS_BY_REGION?: string = undefined;

  @EnvVar({
    description:
      "agones provider: the bearer token file for a region's own cluster, ';'-separated region=path entries (a region not listed: AGONES_TOKEN_FILE)",
  })
  @IsOptional()
  @IsString()
  AGONES_TOKEN_FILES_BY_REGION?: string = undefined;

  @EnvVar({
    description:
      'agones provider: name of the GameServer port players connect to (unset: its first port)',
  })
  @IsOptional()
  @IsString()
  AGONES_PORT_NAME?: string = undefined;

  @EnvVar({
    description:
      'Fault injection for crash-recovery tests only: the allocator process exits right after this step of an allocation. Never set in production',
  })
  @IsOptional()
  @IsIn(ALLOCATION_STEPS)
  ALLOCATOR_EXIT_AFTER_STEP?: AllocationStep = undefined;
}
