import { Inject, Injectable } from '@nestjs/common';
import { CustomObjectsApi, HttpError, KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { AllocatorConfig } from '../allocator.config';
import { AGONES_MATCH_LABEL, AgonesHandOffAnnotations } from '@matchplane/contracts';
import type { AllocationRecord, ProvidedServer } from '@matchplane/allocation';
import {
  AllocationProvider,
  NoCapacityError,
  type AllocationRequest,
  type ServerHandOffInput,
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

function describe(error: unknown): string {
  if (error instanceof HttpError) {
    const body: unknown = error.body;
    const message =
      typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : '';
    return `Kubernetes API answered ${error.statusCode ?? '?'}${message ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Agones: a GameServerAllocation from AGONES_FLEET through the Kubernetes API. The allocation
 * labels the GameServer with the match id, and its first selector asks for an already Allocated
 * server carrying that label, so a retried allocation (after a crash before the endpoint was
 * stored) gets the same server back instead of a second one. The credential goes to the server
 * as annotations (AgonesHandOffAnnotations), which it reads through the Agones SDK.
 */
@Injectable()
export class AgonesProvider extends AllocationProvider {
  readonly name = 'agones' as const;
  private readonly api: CustomObjectsApi;
  private readonly namespace: string;
  private readonly fleet: string;

  constructor(@Inject(AllocatorConfig) private readonly config: AllocatorConfig) {
    super();
    if (!config.AGONES_FLEET) throw new Error('AGONES_FLEET is required for the agones provider');
    this.fleet = config.AGONES_FLEET;
    this.namespace = config.AGONES_NAMESPACE;
    const kube = new KubeConfig();
    if (config.AGONES_API_URL) {
      const token = config.AGONES_TOKEN_FILE
        ? readFileSync(config.AGONES_TOKEN_FILE, 'utf8').trim()
        : undefined;
      kube.loadFromOptions({
        clusters: [{ name: 'agones', server: config.AGONES_API_URL, skipTLSVerify: false }],
        users: [{ name: 'allocator', ...(token ? { token } : {}) }],
        contexts: [{ name: 'agones', cluster: 'agones', user: 'allocator' }],
        currentContext: 'agones',
      });
    } else {
      kube.loadFromCluster();
    }
    this.api = kube.makeApiClient(CustomObjectsApi);
  }

  async allocate(request: AllocationRequest): Promise<ProvidedServer> {
    const body = {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: {
        selectors: [
          {
            matchLabels: { [FLEET_LABEL]: this.fleet, [AGONES_MATCH_LABEL]: request.matchId },
            gameServerState: 'Allocated',
          },
          { matchLabels: { [FLEET_LABEL]: this.fleet }, gameServerState: 'Ready' },
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
      response = await this.api.createNamespacedCustomObject(
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
        `fleet ${this.fleet} had no Ready GameServer for match ${request.matchId} (${status.state ?? 'no state'})`,
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
      providerRef: { gameServer: status.gameServerName, namespace: this.namespace },
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
      await this.api.patchNamespacedCustomObject(
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
      await this.api.deleteNamespacedCustomObject(
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
}
