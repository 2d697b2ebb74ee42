import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AllocatorConfig } from '../allocator.config';
import {
  AllocationStore,
  staticEndpoint,
  type AllocationRecord,
  type ProvidedServer,
  type StaticServer,
} from '@matchplane/allocation';
import {
  AllocationProvider,
  NoCapacityError,
  type AllocationRequest,
  type ServerHandOffInput,
} from './allocation.provider';
import { StaticHandOff } from './static-handoff';
import { staticPool } from '../allocation-regions';

/** Servers looked up first, from the round-robin start, before the whole pool. */
const LOOKUP_WINDOW = 16;

/**
 * A fixed pool: STATIC_SERVERS serves any region, STATIC_SERVERS_BY_REGION a list per region (a
 * match is allocated only among the servers of the region asked for). The lease is the allocation
 * row itself: a server is free when no live allocation names it, and the partial unique index on
 * allocations.server_id settles two allocators picking the same one. Nothing outside PostgreSQL holds state, so a retry after a
 * crash simply finds the match's recorded allocation.
 */
@Injectable()
export class StaticProvider extends AllocationProvider {
  readonly name = 'static' as const;
  override readonly regions: readonly string[] | undefined;
  private readonly servers: StaticServer[];
  /** The servers of each region, or of every region under '' for an any-region pool. */
  private readonly pools = new Map<string, StaticServer[]>();
  /** Round-robin start per pool. */
  private readonly next = new Map<string, number>();

  constructor(
    @Inject(AllocatorConfig) config: AllocatorConfig,
    private readonly dataSource: DataSource,
    private readonly allocations: AllocationStore,
    private readonly handOffs: StaticHandOff,
  ) {
    super();
    this.servers = staticPool(config);
    for (const server of this.servers) {
      const key = server.region ?? '';
      const pool = this.pools.get(key);
      if (pool) pool.push(server);
      else this.pools.set(key, [server]);
    }
    this.regions =
      config.STATIC_SERVERS_BY_REGION === undefined ? undefined : [...this.pools.keys()];
  }

  async allocate(request: AllocationRequest, busy: ReadonlySet<string>): Promise<ProvidedServer> {
    const key = this.regions ? request.region : '';
    const pool = this.pools.get(key) ?? [];
    if (pool.length === 0) {
      throw new NoCapacityError(
        `STATIC_SERVERS_BY_REGION lists no server in region ${request.region} (match ${request.matchId})`,
      );
    }
    // Round-robin start, so concurrent allocations do not all race for the first free server.
    const turn = this.next.get(key) ?? 0;
    this.next.set(key, turn + 1);
    const start = turn % pool.length;
    const rotated = [...pool.slice(start), ...pool.slice(0, start)].filter(
      (server) => !busy.has(server.id),
    );
    // A free server is most often among the next few: those are a handful of index probes, where
    // the whole pool's lookup grows with the pool. The whole pool only when they are all taken.
    const free =
      (rotated.length > LOOKUP_WINDOW
        ? await this.firstFree(rotated.slice(0, LOOKUP_WINDOW))
        : undefined) ?? (await this.firstFree(rotated));
    if (free) {
      return {
        serverId: free.id,
        endpoint: staticEndpoint(free),
        providerRef: {},
        region: free.region ?? request.region,
      };
    }
    throw new NoCapacityError(
      `all ${pool.length} static servers${this.regions ? ` of region ${request.region}` : ''} are serving matches (match ${request.matchId} waits)`,
    );
  }

  async handOff(input: ServerHandOffInput): Promise<Readonly<Record<string, unknown>>> {
    const server = this.servers.find((candidate) => candidate.id === input.allocation.serverId);
    if (!server)
      throw new Error(`server ${input.allocation.serverId} is no longer in the static pool`);
    await this.handOffs.deliver(server, {
      serverId: server.id,
      matchId: input.allocation.matchId,
      credential: input.credential,
      apiUrl: input.apiUrl,
      endpoint: input.allocation.endpoint,
    });
    return {};
  }

  private async firstFree(candidates: readonly StaticServer[]): Promise<StaticServer | undefined> {
    if (candidates.length === 0) return undefined;
    const live = await this.allocations.liveServerIds(
      this.dataSource.manager,
      candidates.map((server) => server.id),
    );
    return candidates.find((server) => !live.has(server.id));
  }

  /** The lease ends with the allocation row; the server itself keeps running for the next match. */
  async release(_allocation: AllocationRecord): Promise<void> {}
}
