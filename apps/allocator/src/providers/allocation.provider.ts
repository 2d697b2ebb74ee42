import type { AllocationProviderName } from '../allocator.config';
import type { AllocationRecord, ProvidedServer } from '@matchplane/allocation';

export interface AllocationRequest {
  readonly matchId: string;
  readonly mode: string;
  /** The region to allocate in: the match's own, or a fallback region (its `regions` only). */
  readonly region: string;
}

/** What a server needs to serve its match; `credential` is secret and never logged. */
export interface ServerHandOffInput {
  readonly allocation: AllocationRecord;
  readonly credential: string;
  readonly apiUrl: string;
}

/** A server its provider reports unhealthy, and the match it was allocated for. */
export interface UnhealthyServer {
  readonly matchId: string;
  readonly serverId: string;
}

/** No server is free now; the allocation is retried (and fails after ALLOCATION_MAX_ATTEMPTS). */
export class NoCapacityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoCapacityError';
  }
}

/**
 * Where game servers come from (DI token; ALLOCATION_PROVIDER picks the implementation). Every
 * method is safe to call again for the same match: a retried allocation must find the server it
 * already got, never a second one.
 */
export abstract class AllocationProvider {
  abstract readonly name: AllocationProviderName;

  /**
   * The regions this provider has servers in, each allocated from separately. Undefined: one pool
   * serving any region (every match is allocated from it, so a full pool leaves nowhere to fall
   * back to). A region the provider does not serve answers {@link NoCapacityError}.
   */
  readonly regions?: readonly string[];

  /**
   * A server for the match in `request.region` (answering its region; an any-region pool may leave
   * it out, and the request's region is recorded); `busy` lists servers found taken by another
   * live match meanwhile.
   */
  abstract allocate(request: AllocationRequest, busy: ReadonlySet<string>): Promise<ProvidedServer>;

  /**
   * Gives the server its credential (replacing any earlier one). Answers provider facts to merge
   * into the allocation's provider_ref (e.g. a process id), if any.
   */
  abstract handOff(input: ServerHandOffInput): Promise<Readonly<Record<string, unknown>>>;

  /** Gives the server back after its match ended without it releasing itself. */
  abstract release(allocation: AllocationRecord): Promise<void>;

  /**
   * The allocated servers the provider itself reports unhealthy (Agones: a GameServer whose SDK
   * health pings stopped). Absent: the provider cannot tell; the heartbeat sweep still does.
   */
  unhealthyServers?(): Promise<UnhealthyServer[]>;
}
