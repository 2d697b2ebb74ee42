import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  AllocationStore,
  type AllocationRecord,
  type ProvidedServer,
} from '@matchplane/allocation';
import type { AllocationProviderName } from '../../allocator/src/allocator.config';
import type { ServerHandOff } from '@matchplane/contracts';
import {
  AllocationProvider,
  NoCapacityError,
  type AllocationRequest,
  type ServerHandOffInput,
} from '../../allocator/src/providers/allocation.provider';

/*
 * Example (docs/EXTENDING.md "A custom allocation provider"): a studio's own fleet of game
 * servers, "studio servers" racked per region, each told about its match by the studio's fleet
 * agent (here a callback). The allocator asks it for a server, persists the answer, publishes the
 * signed roster, then hands the server its workload credential through it.
 */

export interface StudioServer {
  readonly id: string;
  readonly region: string;
  /** host:port players connect to; signed into every join token. */
  readonly endpoint: string;
  readonly rack: string;
}

export interface StudioFleetOptions {
  readonly servers: readonly StudioServer[];
  /** The fleet agent telling a server its match and credential (replacing any earlier one). */
  readonly tell: (handOff: ServerHandOff) => Promise<void>;
  /** The fleet agent telling a server its match is over without it (the allocator gave up). */
  readonly reset: (serverId: string, matchId: string) => Promise<void>;
}

export const STUDIO_FLEET_OPTIONS = Symbol('STUDIO_FLEET_OPTIONS');

/** The studio's service the provider depends on: its inventory and its agent. */
@Injectable()
export class StudioFleet {
  constructor(@Inject(STUDIO_FLEET_OPTIONS) private readonly options: StudioFleetOptions) {}

  serversIn(region: string): StudioServer[] {
    return this.options.servers.filter((server) => server.region === region);
  }

  find(serverId: string): StudioServer | undefined {
    return this.options.servers.find((server) => server.id === serverId);
  }

  tell(handOff: ServerHandOff): Promise<void> {
    return this.options.tell(handOff);
  }

  reset(serverId: string, matchId: string): Promise<void> {
    return this.options.reset(serverId, matchId);
  }
}

/**
 * The recorded provider name. `AllocationProvider.name` is typed to the built-in names, but the
 * allocations.provider column is text: a studio's provider should record its own.
 */
export const STUDIO_PROVIDER_NAME = 'studio' as string as AllocationProviderName;

@Injectable()
export class StudioFleetProvider extends AllocationProvider {
  readonly name = STUDIO_PROVIDER_NAME;

  constructor(
    private readonly fleet: StudioFleet,
    private readonly dataSource: DataSource,
    private readonly allocations: AllocationStore,
  ) {
    super();
  }

  /**
   * The live allocation row is the lease, as for the static provider: the API releases it when
   * the server reports its result, without calling the provider, so a lease kept here in memory
   * would never come back. The allocator persists this answer before anything else.
   */
  async allocate(request: AllocationRequest, busy: ReadonlySet<string>): Promise<ProvidedServer> {
    const servers = this.fleet.serversIn(request.region);
    const live = await this.allocations.liveServerIds(
      this.dataSource.manager,
      servers.map((server) => server.id),
    );
    const free = servers.find((server) => !live.has(server.id) && !busy.has(server.id));
    if (!free) {
      // Retried with backoff; after ALLOCATION_MAX_ATTEMPTS the match fails and its tickets requeue.
      throw new NoCapacityError(
        `no studio server free in ${request.region} (match ${request.matchId} waits)`,
      );
    }
    return { serverId: free.id, endpoint: free.endpoint, providerRef: { rack: free.rack } };
  }

  /** Runs after the roster is published, so the server finds it. Safe to repeat: it replaces. */
  async handOff(input: ServerHandOffInput): Promise<Readonly<Record<string, unknown>>> {
    const { allocation } = input;
    if (!this.fleet.find(allocation.serverId)) {
      throw new Error(`studio server ${allocation.serverId} left the fleet`);
    }
    await this.fleet.tell({
      serverId: allocation.serverId,
      matchId: allocation.matchId,
      credential: input.credential,
      apiUrl: input.apiUrl,
      endpoint: allocation.endpoint,
    });
    return {};
  }

  async release(allocation: AllocationRecord): Promise<void> {
    await this.fleet.reset(allocation.serverId, allocation.matchId);
  }
}

/** The studio's module: passed to `AllocatorModule.forRoot(config, {provider, imports})`. */
@Module({})
export class StudioFleetModule {
  static register(options: StudioFleetOptions): DynamicModule {
    return {
      module: StudioFleetModule,
      providers: [{ provide: STUDIO_FLEET_OPTIONS, useValue: options }, StudioFleet],
      exports: [StudioFleet],
    };
  }
}
