import {
  ErrorCode,
  matchEventsPath,
  PlayerRoutes,
  type AssignmentResponse,
  type CreatePartyTicketRequest,
  type CreateSessionRequest,
  type CreateTicketRequest,
  type JoinPartyRequest,
  type PartyResponse,
  type PartyTicketResponse,
  type MatchEventsResponse,
  type ProbeAnswerRequest,
  type ProbeAnswerResponse,
  type ProbeChallengeResponse,
  type QueueOptionsResponse,
  type SessionResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import {
  HttpTransport,
  type FetchLike,
  type RetryOptions,
  type TransportRequest,
} from './http.transport';
import { EdgeProber, httpProbeEdge } from './edge-probe';
import { GameConnection, type GameAssignment, type GameConnectionOptions } from './game-connection';
import {
  NotificationSubscriber,
  type NotificationHandlers,
  type NotificationSubscriberOptions,
  type NotificationSubscription,
} from './notification-subscriber';
import { MatchplaneApiError } from './sdk.errors';
import { ReadyCheckCalls } from './ready-check';
import { ApiEndpoints, type ApiEndpointsInput } from './api-endpoints';

export interface PlayerClientOptions {
  /**
   * Where the API is served, e.g. `https://mm.example.com` (the `/v1` prefix is added), or the
   * list of its replicas: HTTP calls and the notification socket move to the next replica when
   * theirs stops answering (same session, same Idempotency-Keys, notifications resumed).
   */
  baseUrl: ApiEndpointsInput;
  /** A session token from an earlier `createSession`, to resume it. */
  token?: string;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  /** Per attempt, body included. Default 10_000. */
  requestTimeoutMs?: number;
  /** Retries of network errors, 5xx and 409 IDEMPOTENCY_KEY_IN_PROGRESS; a number is `{retries: n}`. */
  retries?: number | RetryOptions;
}

export interface ProbeOptions {
  /** Challenge/answer round trips per region; the server keeps a median of recent ones. Default 3. */
  samples?: number;
}

export interface ProbeAllResult {
  /** The last answer per measured region (its `estimateMs` is what placement uses). */
  measured: Record<string, ProbeAnswerResponse>;
  /** Regions whose probe failed; queueing needs only one measured region. */
  failed: Record<string, Error>;
}

export interface HeartbeatOptions {
  /** Default: `heartbeatIntervalMs` of the queue options, else 10_000. */
  intervalMs?: number;
  /** Called with a failed heartbeat that does not end the loop (the loop keeps going). Its own throws are ignored. */
  onError?: (error: unknown) => void;
}

/** Why a heartbeat loop ended. */
export type HeartbeatStopReason =
  | { readonly reason: 'stopped' }
  /** The ticket left SEARCHING/MATCHED (e.g. ASSIGNED, CANCELLED, EXPIRED). */
  | { readonly reason: 'left-queue'; readonly ticket: TicketResponse }
  /**
   * The server no longer takes heartbeats for it: 404, or 409 TICKET_FINISHED whose problem says
   * how it ended (`ticketState`, `endReason`, e.g. EXPIRED SEARCH_TIMED_OUT: queue again).
   */
  | { readonly reason: 'finished'; readonly error: MatchplaneApiError };

export interface HeartbeatHandle {
  /** Ends the loop; a heartbeat in flight completes but none follows. Idempotent. */
  stop(): void;
  /** Settles (never rejects) when the loop ends, with why. */
  readonly done: Promise<HeartbeatStopReason>;
}

export interface WaitForTicketOptions {
  /** Default 30_000. */
  timeoutMs?: number;
  /** Default 500. */
  pollMs?: number;
}

/** `waitForTicket` ran out of time; `lastTicket` is what it saw last. */
export class TicketWaitTimeoutError extends Error {
  override name = 'TicketWaitTimeoutError';

  constructor(
    readonly ticketId: string,
    readonly lastTicket: TicketResponse,
    timeoutMs: number,
  ) {
    super(
      `ticket ${ticketId} did not reach the awaited state within ${timeoutMs} ms (last state ${lastTicket.state})`,
    );
  }
}

export interface WaitForAssignmentOptions {
  /** Default 30_000. */
  timeoutMs?: number;
  /** Default 250. */
  pollMs?: number;
}

/** Options of `subscribe` beyond what the client supplies (its base URL and session token). */
export type SubscribeOptions = Omit<NotificationSubscriberOptions, 'baseUrl' | 'token'>;

/** `waitForAssignment` ran out of time while the match was still being set up (`lastState`). */
export class AssignmentWaitTimeoutError extends Error {
  override name = 'AssignmentWaitTimeoutError';

  constructor(
    readonly matchId: string,
    readonly lastState: string | undefined,
    timeoutMs: number,
  ) {
    super(
      `match ${matchId} had no assignment within ${timeoutMs} ms (last state ${lastState ?? 'unknown'})`,
    );
  }
}

/**
 * The match ended (FAILED, CANCELLED, COMPLETED) before this player could be assigned to it, or
 * while it waited; `reason` is the match's end reason when the API gave one (e.g. NO_SHOW).
 */
export class AssignmentUnavailableError extends Error {
  override name = 'AssignmentUnavailableError';

  constructor(
    readonly matchId: string,
    readonly state: string,
    readonly reason?: string,
  ) {
    super(
      `match ${matchId} is ${state}${reason ? ` (${reason})` : ''}: it will never have an assignment to join`,
    );
  }
}

/** Match states after which no assignment is ever served. */
const TERMINAL_MATCH_STATES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** Ticket states that take heartbeats (DESIGN.md "Aggregates and states"). */
const HEARTBEAT_STATES: ReadonlySet<string> = new Set(['SEARCHING', 'MATCHED']);
const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/**
 * A player's typed client of the Matchplane API: session, latency probes, queue tickets and
 * heartbeats, match notifications (`subscribe`), the match assignment and joining its game server
 * (`waitForAssignment`, `joinMatch`). Every error the API answers is thrown as a
 * MatchplaneApiError; a request that got no answer as a MatchplaneNetworkError.
 */
export class PlayerClient {
  private readonly http: HttpTransport;
  private readonly endpoints: ApiEndpoints;
  private currentToken: string | undefined;
  private currentSession: SessionResponse | undefined;
  private lastQueueOptions: QueueOptionsResponse | undefined;
  private readonly edges: EdgeProber;
  /** A ready check's answers: `readyCheck.accept(matchId)`, `readyCheck.decline(matchId)`. */
  readonly readyCheck = new ReadyCheckCalls((request) => this.required(request));

  constructor(options: PlayerClientOptions) {
    // One list for HTTP and notifications: a replica one of them found dead is left by both.
    this.endpoints = ApiEndpoints.from(options.baseUrl);
    this.http = new HttpTransport({ ...options, baseUrl: this.endpoints });
    this.currentToken = options.token;
    this.edges = new EdgeProber(options);
  }

  /** The bearer token sent with every call, if a session was created or given. */
  get token(): string | undefined {
    return this.currentToken;
  }

  /** The last session `createSession` returned on this client. */
  get session(): SessionResponse | undefined {
    return this.currentSession;
  }

  /** Replaces (or, with undefined, drops) the bearer token, e.g. one kept from an earlier run. */
  setToken(token: string | undefined): void {
    this.currentToken = token;
  }

  // ---- Session ----------------------------------------------------------------------------

  /**
   * Signs in and keeps the session token for later calls. Without a provider this is a guest:
   * with no credential a new one, whose `deviceSecret` (returned once) resumes it later.
   */
  async createSession(request: CreateSessionRequest = {}): Promise<SessionResponse> {
    // Sent without the old token: signing in must not depend on a session that may have expired.
    const session = await this.required<SessionResponse>(
      { method: 'POST', path: PlayerRoutes.sessions, body: request, retry: 'idempotency-key' },
      false,
    );
    this.currentToken = session.token;
    this.currentSession = session;
    return session;
  }

  /** Resumes a guest player on this device from the `deviceSecret` of its first session. */
  resumeGuest(deviceSecret: string): Promise<SessionResponse> {
    return this.createSession({ provider: 'guest', credential: deviceSecret });
  }

  /**
   * Ends the current session server-side and forgets the token. A 401 counts as success: the
   * session is already gone (expired, or ended by an earlier attempt whose answer was lost).
   */
  async endSession(): Promise<void> {
    try {
      await this.send({ method: 'DELETE', path: PlayerRoutes.currentSession, retry: 'safe' });
    } catch (err) {
      if (!(err instanceof MatchplaneApiError && err.status === 401)) throw err;
    }
    this.currentToken = undefined;
    this.currentSession = undefined;
  }

  // ---- Latency probes -----------------------------------------------------------------------

  /** What this player may queue for and probe, and how often to heartbeat. */
  async queueOptions(): Promise<QueueOptionsResponse> {
    const options = await this.required<QueueOptionsResponse>({
      method: 'GET',
      path: PlayerRoutes.queueOptions,
      retry: 'safe',
    });
    this.lastQueueOptions = options;
    return options;
  }

  /**
   * Measures the round trip to `region`: per sample, a challenge and at once its answer (the
   * server times the gap). Returns the last answer, whose `estimateMs` covers all kept samples.
   * Where the last `queueOptions()` (probeAll fetches them) lists a probe edge for the region, the
   * challenge and answer go to that edge and its signed measurement to the API; else to the API.
   */
  async probe(region: string, options: ProbeOptions = {}): Promise<ProbeAnswerResponse> {
    const samples = options.samples ?? 3;
    if (!Number.isInteger(samples) || samples < 1)
      throw new Error('samples must be a positive integer');
    const edge = httpProbeEdge(this.lastQueueOptions, region);
    if (edge !== undefined) {
      return this.edges.probe(
        { edge, region, samples, playerId: this.currentSession?.playerId },
        (body) =>
          this.required({
            method: 'POST',
            path: PlayerRoutes.probeMeasurements,
            body,
            retry: 'never',
          }),
      );
    }
    let last: ProbeAnswerResponse | undefined;
    for (let sample = 0; sample < samples; sample += 1) {
      const challenge = await this.required<ProbeChallengeResponse>({
        method: 'POST',
        path: PlayerRoutes.probeChallenge(region),
        retry: 'idempotency-key',
      });
      const answer: ProbeAnswerRequest = {
        challengeId: challenge.challengeId,
        nonce: challenge.nonce,
      };
      last = await this.required<ProbeAnswerResponse>({
        method: 'POST',
        path: PlayerRoutes.probeAnswer(region),
        body: answer,
        retry: 'never',
      });
    }
    // samples >= 1, so the loop ran.
    return last as ProbeAnswerResponse;
  }

  /**
   * Probes each region in turn (one at a time, so probes do not skew each other), by default every
   * region of the queue options. A failing region is reported in `failed`, not thrown.
   */
  async probeAll(regions?: readonly string[], options: ProbeOptions = {}): Promise<ProbeAllResult> {
    const targets = regions ?? (await this.queueOptions()).regions;
    const result: ProbeAllResult = { measured: {}, failed: {} };
    for (const region of targets) {
      try {
        result.measured[region] = await this.probe(region, options);
      } catch (err) {
        result.failed[region] = err instanceof Error ? err : new Error(String(err));
      }
    }
    return result;
  }

  // ---- Queue tickets ------------------------------------------------------------------------

  /**
   * Queues for `mode`. The Idempotency-Key is fresh per call and reused by the SDK's own retries,
   * so a lost answer never creates a second ticket. Needs at least one measured region.
   * `attributes`: the ticket's attributes as the mode declares them (queueOptions(),
   * `modes[].attributes`), e.g. `{ buildVersion: '1.5.0' }`; a bad one is a 400 naming it.
   */
  enqueue(
    mode: string,
    options: { attributes?: Record<string, string | number> } = {},
  ): Promise<TicketResponse> {
    const body: CreateTicketRequest =
      options.attributes === undefined ? { mode } : { mode, attributes: options.attributes };
    return this.required<TicketResponse>({
      method: 'POST',
      path: PlayerRoutes.tickets,
      body,
      retry: 'idempotency-key',
    });
  }

  // ---- Parties -------------------------------------------------------------------------------

  /**
   * Creates a party led by this player; the answer's `inviteCode` (shown once) lets others join.
   * Retried with one Idempotency-Key, so a lost answer is replayed, code included.
   */
  createParty(): Promise<PartyResponse> {
    return this.required<PartyResponse>({
      method: 'POST',
      path: PlayerRoutes.parties,
      retry: 'idempotency-key',
    });
  }

  /** Joins the party of `inviteCode`; joining a party one is already in answers it again. */
  joinParty(inviteCode: string): Promise<PartyResponse> {
    const body: JoinPartyRequest = { inviteCode };
    return this.required<PartyResponse>({
      method: 'POST',
      path: PlayerRoutes.partyJoin,
      body,
      retry: 'safe',
    });
  }

  /** This player's party: its members and whether each has probed (a party enqueue needs all). */
  party(): Promise<PartyResponse> {
    return this.required<PartyResponse>({
      method: 'GET',
      path: PlayerRoutes.currentParty,
      retry: 'safe',
    });
  }

  /** Leaves the party (the leader leaving disbands it). */
  async leaveParty(): Promise<void> {
    await this.send({ method: 'POST', path: PlayerRoutes.currentPartyLeave, retry: 'never' });
  }

  /** Disbands the party (the leader only). */
  async disbandParty(): Promise<void> {
    await this.send({ method: 'DELETE', path: PlayerRoutes.currentParty, retry: 'never' });
  }

  /**
   * The leader queues the whole party for `mode`: one ticket per member, all matched together onto
   * one team. Each member heartbeats its own ticket (the leader's client sees all of them here; a
   * member's finds its own with `waitForPartyTicket`); a member's cancel or missed heartbeats take
   * the whole party out.
   */
  enqueueParty(mode: string): Promise<PartyTicketResponse> {
    const body: CreatePartyTicketRequest = { mode };
    return this.required<PartyTicketResponse>({
      method: 'POST',
      path: PlayerRoutes.partyTickets,
      body,
      retry: 'idempotency-key',
    });
  }

  /**
   * A party member's own ticket once the leader queued the party: polls the party until this
   * player's member entry names a live party ticket. Needs this client's session (createSession).
   */
  async waitForPartyTicket(options: WaitForTicketOptions = {}): Promise<string> {
    const playerId = this.currentSession?.playerId;
    if (!playerId) throw new Error('waitForPartyTicket needs a session made by createSession');
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollMs = options.pollMs ?? 500;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const party = await this.party();
      const ticketId = party.members.find((member) => member.playerId === playerId)?.ticketId;
      if (ticketId) return ticketId;
      if (Date.now() + pollMs > deadline) {
        throw new Error(`the party was not queued within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** Tells the server the player is still waiting; a ticket without heartbeats expires. */
  heartbeat(ticketId: string): Promise<TicketResponse> {
    return this.required<TicketResponse>({
      method: 'POST',
      path: PlayerRoutes.ticketHeartbeat(ticketId),
      retry: 'idempotency-key',
    });
  }

  /** Leaves the queue. */
  cancel(ticketId: string): Promise<TicketResponse> {
    return this.required<TicketResponse>({
      method: 'DELETE',
      path: PlayerRoutes.ticket(ticketId),
      retry: 'idempotency-key',
    });
  }

  /** The ticket as it is now, with why it is not matched yet while SEARCHING. */
  ticket(ticketId: string): Promise<TicketResponse> {
    return this.required<TicketResponse>({
      method: 'GET',
      path: PlayerRoutes.ticket(ticketId),
      retry: 'safe',
    });
  }

  /**
   * Heartbeats `ticketId` until stopped, until the ticket leaves SEARCHING/MATCHED, or until the
   * server answers 404 / 409 TICKET_FINISHED. Beats never overlap; the timers are unref'd, so the
   * loop alone does not keep a process alive.
   */
  startHeartbeats(ticketId: string, options: HeartbeatOptions = {}): HeartbeatHandle {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settle: (reason: HeartbeatStopReason) => void = () => undefined;
    const done = new Promise<HeartbeatStopReason>((resolve) => (settle = resolve));

    const finish = (reason: HeartbeatStopReason): void => {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      settle(reason);
    };
    const report = (error: unknown): void => {
      if (stopped) return;
      try {
        options.onError?.(error);
      } catch {
        // A throwing callback must not end (or crash) the loop.
      }
    };
    const schedule = (intervalMs: number): void => {
      if (stopped) return;
      timer = setTimeout(() => void beat(intervalMs), intervalMs);
      unref(timer);
    };
    const beat = async (intervalMs: number): Promise<void> => {
      try {
        const ticket = await this.heartbeat(ticketId);
        if (!HEARTBEAT_STATES.has(ticket.state)) return finish({ reason: 'left-queue', ticket });
      } catch (err) {
        if (isTicketGone(err)) return finish({ reason: 'finished', error: err });
        report(err);
      }
      schedule(intervalMs);
    };

    void this.heartbeatIntervalMs(options.intervalMs, report).then(schedule);
    return { stop: () => finish({ reason: 'stopped' }), done };
  }

  /**
   * Polls the ticket until `predicate` holds and returns it; throws TicketWaitTimeoutError after
   * `timeoutMs`. For tests and demos: a real client follows notifications instead.
   */
  async waitForTicket(
    ticketId: string,
    predicate: (ticket: TicketResponse) => boolean,
    options: WaitForTicketOptions = {},
  ): Promise<TicketResponse> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollMs = options.pollMs ?? 500;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ticket = await this.ticket(ticketId);
      if (predicate(ticket)) return ticket;
      if (Date.now() + pollMs > deadline)
        throw new TicketWaitTimeoutError(ticketId, ticket, timeoutMs);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  // ---- Matches: notifications, assignment, joining -------------------------------------------

  /**
   * Follows this player's matches over the `/v1/notifications` WebSocket: a NotificationSubscriber
   * on this client's base URL, reading the session token at every (re)connect, so a token replaced
   * by `createSession`/`setToken` is used from the next reconnect on. Reconnects with backoff and
   * resumes from the last revision seen per match; `handlers.onEvent` sees each match's revisions
   * once, in order, without a gap.
   */
  subscribe(
    handlers: NotificationHandlers,
    options: SubscribeOptions = {},
  ): NotificationSubscription {
    return new NotificationSubscriber({
      ...options,
      baseUrl: this.endpoints,
      token: () => this.currentToken,
    }).subscribe(handlers);
  }

  /**
   * A match's history after revision `after` (0: all of it) and its current state: what the
   * notification socket would replay (`GET /v1/matches/{id}/events?after=N`).
   */
  matchEvents(matchId: string, after = 0): Promise<MatchEventsResponse> {
    if (!Number.isInteger(after) || after < 0)
      throw new Error('after must be a non-negative integer');
    return this.required<MatchEventsResponse>({
      method: 'GET',
      path: `${matchEventsPath(matchId)}?after=${after}`,
      retry: 'safe',
    });
  }

  /**
   * Where and how this player joins `matchId` (server endpoint, team, join token). Served from
   * ASSIGNMENT_READY until the match ends; before that the API answers 409 ASSIGNMENT_NOT_READY,
   * after it 410 MATCH_ENDED (the problem's `matchState` and `endReason` say how), each thrown as
   * a MatchplaneApiError. See `waitForAssignment`.
   */
  assignment(matchId: string): Promise<AssignmentResponse> {
    return this.required<AssignmentResponse>({
      method: 'GET',
      path: PlayerRoutes.assignment(matchId),
      retry: 'safe',
    });
  }

  /**
   * Polls `assignment(matchId)` while it answers 409 ASSIGNMENT_NOT_READY (the server is still
   * being allocated or has not registered). Throws AssignmentUnavailableError (with the match's
   * end reason) as soon as the match has ended (410 MATCH_ENDED, e.g. FAILED NO_SHOW), AssignmentWaitTimeoutError after
   * `timeoutMs`, and any other API error at once. A client following notifications can call
   * `assignment` once ASSIGNMENT_READY arrives instead.
   */
  async waitForAssignment(
    matchId: string,
    options: WaitForAssignmentOptions = {},
  ): Promise<AssignmentResponse> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollMs = options.pollMs ?? 250;
    const deadline = Date.now() + timeoutMs;
    let lastState: string | undefined;
    let lastRevision = 0;
    for (;;) {
      try {
        return await this.assignment(matchId);
      } catch (err) {
        if (err instanceof MatchplaneApiError && err.code === ErrorCode.MATCH_ENDED) {
          const { matchState, endReason } = err.problem ?? {};
          throw new AssignmentUnavailableError(matchId, matchState ?? 'ENDED', endReason);
        }
        if (!(err instanceof MatchplaneApiError && err.code === ErrorCode.ASSIGNMENT_NOT_READY))
          throw err;
      }
      // Not ready: is the match still on its way, or over? Only new events are fetched.
      const events = await this.matchEvents(matchId, lastRevision);
      lastState = events.state;
      lastRevision = Math.max(lastRevision, events.revision);
      if (TERMINAL_MATCH_STATES.has(events.state))
        throw new AssignmentUnavailableError(matchId, events.state);
      if (Date.now() + pollMs > deadline)
        throw new AssignmentWaitTimeoutError(matchId, lastState, timeoutMs);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /**
   * Joins the game server of an assignment (`ws://<endpoint>/join`, join message with its token)
   * and resolves once the server answered `joined`. Rejects with GameJoinRefusedError carrying the
   * server's close code and reason (4401 invalid token, 4403 not on the roster, 4410 joining
   * closed, ...) or with GameConnectError. The connection's `ended` resolves with the outcome.
   */
  joinMatch(
    assignment: GameAssignment,
    options: GameConnectionOptions = {},
  ): Promise<GameConnection> {
    return GameConnection.join(assignment, options);
  }

  // ---- Internals ----------------------------------------------------------------------------

  private send<T>(
    request: Omit<TransportRequest, 'token'>,
    withToken = true,
  ): Promise<T | undefined> {
    const token = withToken ? this.currentToken : undefined;
    return this.http.request<T>({ ...request, ...(token !== undefined ? { token } : {}) });
  }

  /** A call whose success always has a body; an empty one is a contract violation worth a clear error. */
  private async required<T>(
    request: Omit<TransportRequest, 'token'>,
    withToken = true,
  ): Promise<T> {
    const body = await this.send<T>(request, withToken);
    if (body === undefined)
      throw new Error(`${request.method} ${request.path} answered without a body`);
    return body;
  }

  private async heartbeatIntervalMs(
    explicit: number | undefined,
    report: (error: unknown) => void,
  ): Promise<number> {
    if (explicit !== undefined) return explicit;
    if (this.lastQueueOptions) return this.lastQueueOptions.heartbeatIntervalMs;
    try {
      return (await this.queueOptions()).heartbeatIntervalMs;
    } catch (err) {
      report(err);
      return DEFAULT_HEARTBEAT_INTERVAL_MS;
    }
  }
}

function isTicketGone(err: unknown): err is MatchplaneApiError {
  return (
    err instanceof MatchplaneApiError &&
    (err.status === 404 || (err.status === 409 && err.code === ErrorCode.TICKET_FINISHED))
  );
}

/** Node timers have unref(); browser timers are numbers and never hold a process open anyway. */
function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}
