import { Inject, Injectable } from '@nestjs/common';
import { CustomObjectsApi, HttpError, KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { AllocatorConfig } from '../allocator.config';
import { agonesRegions } from '../allocation-regions';
import { AGONES_MATCH_LABEL, AgonesHandOffAnnotations } from '@matchplane/contracts';
import type { AllocationRecord, ProvidedServer } from '@matchplane/allocation';
import {
  AllocationProvider,
  NoCapacityError,
  type AllocationRequest,
  type ServerHandOffInput,
  type UnhealthyServer,
} from './allocation.provider';

const FLEET_LABEL = 'agones.dev/fleet';

/** The parts of a GameServerAllocation's status the allocator reads. */
interface AllocationStatus {
  state?: string;
  gameServerName?: string;
  address?: string;
  ports?: { name?: string; port?: number }[];
}

function statusOf(body: unknown): AllocationStatus {
  if (typeof body !== 'object' || body === null) return {};
  const status = (body as { status?: unknown }).status;
  return typeof status === 'object' && status !== null ? status : {};
}

/** The parts of a listed GameServer the health check reads. */
interface ListedGameServer {
  metadata?: { name?: string; labels?: Record<string, string> };
  status?: { state?: string };
}

function itemsOf(body: unknown): ListedGameServer[] {
  if (typeof body !== 'object' || body === null) return [];
  const items = (body as { items?: unknown }).items;
  return Array.isArray(items) ? (items as ListedGameServer[]) : [];
}

function describe(error: unknown): string {
  if (error instanceof HttpError) {
    const body: unknown = error.body;
    const message =
      typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : '';
    return `Kubernetes API answered ${error.statusCode ?? '?'}${message ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A Kubernetes API client: `apiUrl` with the token in `tokenFile`, or the in-cluster account. */
function customObjectsApi(
  apiUrl: string | undefined,
  tokenFile: string | undefined,
): CustomObjectsApi {
  const kube = new KubeConfig();
  if (apiUrl) {
    const token = tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined;
    kube.loadFromOptions({
      clusters: [{ name: 'agones', server: apiUrl, skipTLSVerify: false }],
      users: [{ name: 'allocator', ...(token ? { token } : {}) }],
      contexts: [{ name: 'agones', cluster: 'agones', user: 'allocator' }],
      currentContext: 'agones',
    });
  } else {
    kube.loadFromCluster();
  }
  return kube.makeApiClient(CustomObjectsApi);
}

/** Where one region's servers come from: its Fleet, through its cluster's API. */
interface FleetTarget {
  readonly fleet: string;
  readonly api: CustomObjectsApi;
}

/**
 * Agones: a GameServerAllocation through the Kubernetes API, from AGONES_FLEET for any region or
 * from the match's region's Fleet (AGONES_FLEETS_BY_REGION), in that region's cluster when
 * AGONES_API_URLS_BY_REGION names one. The allocation labels the GameServer with the match id,
 * and its first selector asks for an already Allocated server carrying that label (in any Fleet of
 * the cluster), so a retried allocation (after a crash before the endpoint was stored) gets the
 * same server back instead of a second one. The credential goes to the server as annotations
 * (AgonesHandOffAnnotations), which it reads through the Agones SDK.
 */
@Injectable()
export class AgonesProvider extends AllocationProvider {
  readonly name = 'agones' as const;
  override readonly regions: readonly string[] | undefined;
  private readonly namespace: string;
  /** AGONES_FLEET's, serving any region; undefined with AGONES_FLEETS_BY_REGION. */
  private readonly anyRegion?: FleetTarget;
  private readonly byRegion = new Map<string, FleetTarget>();
  /** The default cluster's client, for allocations recorded without a region. */
  private readonly defaultApi: () => CustomObjectsApi;

  constructor(@Inject(AllocatorConfig) private readonly config: AllocatorConfig) {
    super();
    this.namespace = config.AGONES_NAMESPACE;
    // One client per cluster (API URL and token), shared by the regions whose Fleets run there.
    const clients = new Map<string, CustomObjectsApi>();
    const client = (apiUrl?: string, tokenFile?: string): CustomObjectsApi => {
      const key = `${apiUrl ?? ''}\n${tokenFile ?? ''}`;
      let api = clients.get(key);
      if (!api) {
        api = customObjectsApi(apiUrl, tokenFile);
        clients.set(key, api);
      }
      return api;
    };
    this.defaultApi = () => client(config.AGONES_API_URL, config.AGONES_TOKEN_FILE);
    const regions = agonesRegions(config);
    this.regions = regions ? [...regions.keys()] : undefined;
    if (regions) {
      for (const [region, target] of regions) {
        this.byRegion.set(
          region,
          target.apiUrl === undefined
            ? { fleet: target.fleet, api: this.defaultApi() }
            : {
                fleet: target.fleet,
                api: client(target.apiUrl, target.tokenFile ?? config.AGONES_TOKEN_FILE),
              },
        );
      }
    } else {
      this.anyRegion = { fleet: config.AGONES_FLEET ?? '', api: this.defaultApi() };
    }
  }

  async allocate(request: AllocationRequest): Promise<ProvidedServer> {
    const target = this.byRegion.get(request.region) ?? this.anyRegion;
    if (!target) {
      throw new NoCapacityError(
        `AGONES_FLEETS_BY_REGION names no Fleet in region ${request.region} (match ${request.matchId})`,
      );
    }
    const body = {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: {
        selectors: [
          { matchLabels: { [AGONES_MATCH_LABEL]: request.matchId }, gameServerState: 'Allocated' },
          { matchLabels: { [FLEET_LABEL]: target.fleet }, gameServerState: 'Ready' },
        ],
        metadata: {
          labels: { [AGONES_MATCH_LABEL]: request.matchId },
          annotations: {
            'matchplane.dev/mode': request.mode,
            'matchplane.dev/region': request.region,
          },
        },
      },
    };
    let response: { body: unknown };
    try {
      response = await target.api.createNamespacedCustomObject(
        'allocation.agones.dev',
        'v1',
        this.namespace,
        'gameserverallocations',
        body,
      );
    } catch (error) {
      throw new Error(
        `GameServerAllocation for match ${request.matchId} failed: ${describe(error)}`,
      );
    }
    const status = statusOf(response.body);
    if (status.state !== 'Allocated') {
      throw new NoCapacityError(
        `fleet ${target.fleet} had no Ready GameServer for match ${request.matchId} (${status.state ?? 'no state'})`,
      );
    }
    const wanted = this.config.AGONES_PORT_NAME;
    const port = (status.ports ?? []).find((p) => wanted === undefined || p.name === wanted)?.port;
    if (!status.gameServerName || !status.address || port === undefined) {
      throw new Error(
        `GameServerAllocation for match ${request.matchId} answered no server name, address or port`,
      );
    }
    return {
      serverId: status.gameServerName,
      endpoint: status.address.includes(':')
        ? `[${status.address}]:${port}`
        : `${status.address}:${port}`,
      providerRef: {
        gameServer: status.gameServerName,
        namespace: this.namespace,
        fleet: target.fleet,
      },
      region: request.region,
    };
  }

  async handOff(input: ServerHandOffInput): Promise<Readonly<Record<string, unknown>>> {
    const patch = {
      metadata: {
        annotations: {
          [AgonesHandOffAnnotations.MATCH_ID]: input.allocation.matchId,
          [AgonesHandOffAnnotations.CREDENTIAL]: input.credential,
          [AgonesHandOffAnnotations.API_URL]: input.apiUrl,
        },
      },
    };
    try {
      await this.apiOf(input.allocation).patchNamespacedCustomObject(
        'agones.dev',
        'v1',
        this.namespace,
        'gameservers',
        input.allocation.serverId,
        patch,
        undefined,
        undefined,
        undefined,
        { headers: { 'Content-Type': 'application/merge-patch+json' } },
      );
    } catch (error) {
      throw new Error(
        `hand-off to GameServer ${input.allocation.serverId} failed: ${describe(error)}`,
      );
    }
    return {};
  }

  /** Deleting an Allocated GameServer is how Agones gives it back; the Fleet replaces it. */
  async release(allocation: AllocationRecord): Promise<void> {
    try {
      await this.apiOf(allocation).deleteNamespacedCustomObject(
        'agones.dev',
        'v1',
        this.namespace,
        'gameservers',
        allocation.serverId,
      );
    } catch (error) {
      if (error instanceof HttpError && error.statusCode === 404) return;
      throw new Error(`release of GameServer ${allocation.serverId} failed: ${describe(error)}`);
    }
  }

  /**
   * GameServers labelled with a match id (the ones this allocator allocated) whose state is
   * Unhealthy, in every cluster the provider uses: Agones' own health check (SDK pings) found the
   * process gone or hung. One list call per cluster.
   */
  override async unhealthyServers(): Promise<UnhealthyServer[]> {
    const clusters = new Set(
      [...this.byRegion.values(), ...(this.anyRegion ? [this.anyRegion] : [])].map((t) => t.api),
    );
    const found: UnhealthyServer[] = [];
    for (const api of clusters) {
      let response: { body: unknown };
      try {
        response = await api.listNamespacedCustomObject(
          'agones.dev',
          'v1',
          this.namespace,
          'gameservers',
          undefined,
          undefined,
          undefined,
          undefined,
          AGONES_MATCH_LABEL,
        );
      } catch (error) {
        throw new Error(`listing GameServers failed: ${describe(error)}`);
      }
      for (const item of itemsOf(response.body)) {
        const matchId = item.metadata?.labels?.[AGONES_MATCH_LABEL];
        const serverId = item.metadata?.name;
        if (item.status?.state === 'Unhealthy' && matchId && serverId) {
          found.push({ matchId, serverId });
        }
      }
    }
    return found;
  }

  /** The cluster an allocation's GameServer runs in: its region's (the default one for any region). */
  private apiOf(allocation: AllocationRecord): CustomObjectsApi {
    const target =
      allocation.region === undefined ? undefined : this.byRegion.get(allocation.region);
    return target?.api ?? this.defaultApi();
  }
}
