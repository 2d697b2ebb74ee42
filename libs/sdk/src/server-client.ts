import {
  ErrorCode,
  ServerRoutes,
  type BackfillAcceptRequest,
  type BackfillConnectRequest,
  type BackfillConnectResponse,
  type BackfillRequestBody,
  type BackfillResponse,
  type InitialConnectRequest,
  type InitialConnectResponse,
  type MatchResultRequest,
  type MatchResultResponse,
  type RegisterServerRequest,
  type PlayerPresenceResponse,
  type RegisterServerResponse,
  type RosterResponse,
  type ServerHeartbeatResponse,
} from '@matchplane/contracts';
import {
  HttpTransport,
  type FetchLike,
  type RetryOptions,
  type TransportRequest,
} from './http.transport';
import { MatchplaneApiError } from './sdk.errors';
import {
  runServerHeartbeats,
  type ServerHeartbeatHandle,
  type ServerHeartbeatOptions,
} from './server-heartbeats';

export interface ServerClientOptions {
  /** Where the API is served, e.g. `https://mm.example.com`; the `/v1` prefix is added. */
  baseUrl: string;
  /** The server id the allocator assigned (MATCHPLANE_SERVER_ID). */
  serverId: string;
  /** The workload credential bound to that server id (MATCHPLANE_SERVER_CREDENTIAL). */
  credential: string;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /** Per attempt, body included. Default 10_000. */
  requestTimeoutMs?: number;
  /** Retries of network errors and 5xx; a number is `{retries: n}`. Default 2. */
  retries?: number | RetryOptions;
}

/**
 * A dedicated game server's typed client of the Matchplane server routes, authenticated with its
 * workload credential. Every call is retried on network errors and 5xx. Register,
 * initial-connect, result and the backfill accept, connect and cancel are idempotent by route
 * semantics (a repeat of the same report is answered like the first) and the roster and a
 * backfill's state are reads, so they go without an Idempotency-Key; requesting a backfill
 * creates one (see requestBackfill). Once the match has ended and its
 * allocation is released, the credential is refused (401 ALLOCATION_ENDED) everywhere but the
 * result route, which answers an identical repeat as recorded and a conflicting one 409
 * RESULT_CONFLICT. Errors are
 * MatchplaneApiError (the API answered) or MatchplaneNetworkError (it did not).
 */
/**
 * What `result` resolves with when an earlier attempt's answer was lost and a retry met 401
 * ALLOCATION_ENDED (a control plane from before result replays; today's answers the repeat as
 * recorded): that attempt's result was recorded and the server released.
 */
export interface ResultAlreadyRecorded {
  readonly alreadyRecorded: true;
}

export class ServerClient {
  readonly serverId: string;
  private readonly http: HttpTransport;
  private readonly credential: string;
  /** Some result attempt went unanswered: the API may have recorded it. */
  private resultMayBeRecorded = false;

  constructor(options: ServerClientOptions) {
    if (options.serverId === '') throw new Error('serverId must not be empty');
    if (options.credential === '') throw new Error('credential must not be empty');
    this.http = new HttpTransport(options);
    this.serverId = options.serverId;
    this.credential = options.credential;
  }

  /**
   * Tells the control plane the server is up and players may connect (the match becomes
   * ASSIGNMENT_READY). `protocolVersion` is normally SERVER_PROTOCOL_VERSION.
   */
  register(protocolVersion: number, imageDigest: string): Promise<RegisterServerResponse> {
    const body: RegisterServerRequest = { protocolVersion, imageDigest };
    return this.required({ method: 'POST', path: ServerRoutes.register(this.serverId), body });
  }

  /**
   * One heartbeat: the server is alive. Sent once, never retried: the next beat is the retry.
   * See {@link startHeartbeats}, which sends them by itself.
   */
  heartbeat(): Promise<ServerHeartbeatResponse> {
    return this.required({
      method: 'POST',
      path: ServerRoutes.heartbeat(this.serverId),
      retry: 'never',
    });
  }

  /**
   * Heartbeats now and then every `intervalMs` (default a third of the control plane's default
   * SERVER_HEARTBEAT_TIMEOUT_MS) until stopped or until the allocation ended (401
   * ALLOCATION_ENDED). Start it once registered at the latest: a registered server that stays
   * silent past the timeout has its match FAILED SERVER_LOST.
   */
  startHeartbeats(options: ServerHeartbeatOptions = {}): ServerHeartbeatHandle {
    return runServerHeartbeats(() => this.heartbeat(), options);
  }

  /**
   * A joined player's connection dropped: it may rejoin within its mode's grace window, past which
   * it is ABANDONED. Idempotent (a repeat answers the same).
   */
  playerLeft(playerId: string): Promise<PlayerPresenceResponse> {
    return this.required({
      method: 'POST',
      path: ServerRoutes.playerLeft(this.serverId, playerId),
    });
  }

  /** The player who left is back; a MatchplaneApiError 410 PLAYER_ABANDONED: it was too late. */
  playerRejoined(playerId: string): Promise<PlayerPresenceResponse> {
    return this.required({
      method: 'POST',
      path: ServerRoutes.playerRejoined(this.serverId, playerId),
    });
  }

  /** The match's roster: every player's team and join token, with the allocator's signed manifest. */
  roster(): Promise<RosterResponse> {
    return this.required({ method: 'GET', path: ServerRoutes.roster(this.serverId) });
  }

  /** Who connected before the connect deadline; everyone else is a no-show. */
  initialConnect(connectedPlayerIds: readonly string[]): Promise<InitialConnectResponse> {
    const body: InitialConnectRequest = { connectedPlayerIds: [...connectedPlayerIds] };
    return this.required({
      method: 'POST',
      path: ServerRoutes.initialConnect(this.serverId),
      body,
    });
  }

  /**
   * The match's outcome; ends it. A retry after a lost answer is answered as recorded; a report
   * that conflicts with how the match ended is a MatchplaneApiError 409 RESULT_CONFLICT naming
   * it. Resolves with the control plane's record, or with
   * {@link ResultAlreadyRecorded} when an earlier attempt (of this call, or an earlier call that
   * threw a MatchplaneNetworkError) went unanswered and a retry was refused with 401
   * ALLOCATION_ENDED: that attempt was recorded and the allocation released, so there is nothing
   * left to report. ALLOCATION_ENDED with no unanswered attempt before it is thrown: the match was
   * ended without this server's result (e.g. by reconciliation).
   */
  async result(request: MatchResultRequest): Promise<MatchResultResponse | ResultAlreadyRecorded> {
    try {
      return await this.required<MatchResultResponse>({
        method: 'POST',
        path: ServerRoutes.result(this.serverId),
        body: request,
        onUnanswered: () => (this.resultMayBeRecorded = true),
      });
    } catch (error) {
      if (
        this.resultMayBeRecorded &&
        error instanceof MatchplaneApiError &&
        error.code === ErrorCode.ALLOCATION_ENDED
      ) {
        return { alreadyRecorded: true };
      }
      throw error;
    }
  }

  /**
   * Asks the control plane to fill `slots` open places on `team` from the queue (201, state
   * OPEN). A retry cannot open a second request: the API keeps one live request per team, and
   * answers the same request again (same team and places, still OPEN) with the one it opened (200),
   * so a retry after a lost answer keeps the request id; a different one, or a repeat once the
   * request moved on, is 409 BACKFILL_CONFLICT naming the live request. Retried without an
   * Idempotency-Key: the route takes none (no server route does).
   */
  requestBackfill(body: BackfillRequestBody): Promise<BackfillResponse> {
    return this.required({ method: 'POST', path: ServerRoutes.backfills(this.serverId), body });
  }

  /** A backfill request's current state (poll it until PUBLISHED or terminal). */
  backfill(requestId: string): Promise<BackfillResponse> {
    return this.required({ method: 'GET', path: ServerRoutes.backfill(this.serverId, requestId) });
  }

  /**
   * Withdraws a backfill request (CANCELLED, reason SERVER_CANCELLED); refused with 409
   * BACKFILL_CONFLICT once ASSIGNED or FILLED.
   */
  cancelBackfill(requestId: string): Promise<BackfillResponse> {
    return this.required({
      method: 'DELETE',
      path: ServerRoutes.backfill(this.serverId, requestId),
    });
  }

  /**
   * The server verified roster revision `rosterRevision` (the request's) and admits its added
   * players: the request becomes ASSIGNED and they are told to connect. A repeat answers the
   * current state.
   */
  acceptBackfill(requestId: string, rosterRevision: number): Promise<BackfillResponse> {
    const body: BackfillAcceptRequest = { rosterRevision };
    return this.required({
      method: 'POST',
      path: ServerRoutes.backfillAccept(this.serverId, requestId),
      body,
    });
  }

  /** Which of the request's added players connected; the rest are no-shows (state FILLED). */
  reportBackfillConnect(
    requestId: string,
    connectedPlayerIds: readonly string[],
  ): Promise<BackfillConnectResponse> {
    const body: BackfillConnectRequest = { connectedPlayerIds: [...connectedPlayerIds] };
    return this.required({
      method: 'POST',
      path: ServerRoutes.backfillConnect(this.serverId, requestId),
      body,
    });
  }

  /** A call whose success always has a body; an empty one is a contract violation worth a clear error. */
  private async required<T>(
    request: Omit<TransportRequest, 'token' | 'retry'> & { retry?: TransportRequest['retry'] },
  ): Promise<T> {
    const body = await this.http.request<T>({
      retry: 'safe',
      ...request,
      token: this.credential,
    });
    if (body === undefined) {
      throw new Error(`${request.method} ${request.path} answered without a body`);
    }
    return body;
  }
}
