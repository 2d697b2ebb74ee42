import {
  PlayerRoutes,
  type AssignmentResponse,
  type CreateSessionRequest,
  type BlockListResponse,
  type CreatePartyTicketRequest,
  type CreateTicketRequest,
  type MatchEventsResponse,
  type PartyResponse,
  type PartyTicketResponse,
  type ProbeAnswerResponse,
  type QueueOptionsResponse,
  type SessionResponse,
  type TicketResponse,
} from '@matchplane/contracts';
import { ApiEndpoints, type ApiEndpointsInput } from './api-endpoints';
import { EdgeProber } from './edge-probe';
import type { GameAssignment, GameConnection, GameConnectionOptions } from './game-connection';
import { HttpTransport, type FetchLike, type RetryOptions } from './http.transport';
import type { NotificationHandlers, NotificationSubscription } from './notification-subscriber';
import type { PlayerCall, PlayerCalls } from './player-calls';
import { MatchCalls, type SubscribeOptions, type WaitForAssignmentOptions } from './player-matches';
import { AvoidListCalls } from './player-avoids';
import { LobbyCalls } from './player-lobbies';
import { PartyCalls } from './player-parties';
import { ProbeCalls, type ProbeAllResult, type ProbeOptions } from './player-probes';
import {
  TicketCalls,
  type HeartbeatHandle,
  type HeartbeatOptions,
  type WaitForTicketOptions,
} from './player-tickets';
import { ReadyCheckCalls } from './ready-check';
import { MatchplaneApiError } from './sdk.errors';
import type { WebSocketConnector } from './web-socket';

export type { ProbeAllResult, ProbeOptions } from './player-probes';
export {
  TicketWaitTimeoutError,
  type HeartbeatHandle,
  type HeartbeatOptions,
  type HeartbeatStopReason,
  type WaitForTicketOptions,
} from './player-tickets';
export {
  AssignmentUnavailableError,
  AssignmentWaitTimeoutError,
  type SubscribeOptions,
  type WaitForAssignmentOptions,
} from './player-matches';

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
  /**
   * How the notification and game sockets are opened. Default: the installed connector
   * (`@matchplane/sdk/node` installs `ws`), else the platform's WebSocket.
   */
  webSocket?: WebSocketConnector;
}

/**
 * A player's typed client of the Matchplane API: session, latency probes, queue tickets and
 * heartbeats, match notifications (`subscribe`), the match assignment and joining its game server
 * (`waitForAssignment`, `joinMatch`). Every error the API answers is thrown as a
 * MatchplaneApiError; a request that got no answer as a MatchplaneNetworkError.
 */
export class PlayerClient {
  private readonly http: HttpTransport;
  private currentToken: string | undefined;
  private currentSession: SessionResponse | undefined;
  private readonly calls: PlayerCalls;
  private readonly probes: ProbeCalls;
  private readonly tickets: TicketCalls;
  private readonly parties: PartyCalls;
  private readonly matches: MatchCalls;
  /** A ready check's answers: `readyCheck.accept(matchId)`, `readyCheck.decline(matchId)`. */
  readonly readyCheck: ReadyCheckCalls;
  /** Lobbies (custom games): create, join by code, leave, kick, setTeams, start, waitForStart. */
  readonly lobbies: LobbyCalls;
  /** The avoid list (in one match only when nothing else fits): list, add, remove. */
  readonly avoids: AvoidListCalls;

  constructor(options: PlayerClientOptions) {
    // One list for HTTP and notifications: a replica one of them found dead is left by both.
    const endpoints = ApiEndpoints.from(options.baseUrl);
    this.http = new HttpTransport({ ...options, baseUrl: endpoints });
    this.currentToken = options.token;
    this.calls = {
      send: (request) => this.send(request),
      required: (request) => this.required(request),
    };
    const playerId = (): string | undefined => this.currentSession?.playerId;
    this.probes = new ProbeCalls(this.calls, new EdgeProber(options), playerId);
    this.tickets = new TicketCalls(this.calls, this.probes);
    this.parties = new PartyCalls(this.calls, playerId);
    this.matches = new MatchCalls(
      this.calls,
      endpoints,
      () => this.currentToken,
      options.webSocket,
    );
    this.readyCheck = new ReadyCheckCalls((request) => this.required(request));
    this.lobbies = new LobbyCalls(this.calls, playerId);
    this.avoids = new AvoidListCalls(this.calls);
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
  queueOptions(): Promise<QueueOptionsResponse> {
    return this.probes.queueOptions();
  }

  /**
   * Measures the round trip to `region`: per sample, a challenge and at once its answer (the
   * server times the gap). Returns the last answer, whose `estimateMs` covers all kept samples.
   * Where the last `queueOptions()` (probeAll fetches them) lists a probe edge for the region, the
   * samples are taken there in rounds (each answer brings the next challenge) and the signed
   * measurements go to the API after each chain, never while a sample is on the wire; else to the
   * API. `samples` is 1 to MAX_PROBE_SAMPLES (50) and `recordWithinMs` positive, a RangeError
   * before any request otherwise.
   */
  probe(region: string, options: ProbeOptions = {}): Promise<ProbeAnswerResponse> {
    return this.probes.probe(region, options);
  }

  /**
   * Probes each region in turn (one at a time, so probes do not skew each other), by default every
   * region of the queue options. A failing region is reported in `failed`, not thrown.
   */
  probeAll(regions?: readonly string[], options: ProbeOptions = {}): Promise<ProbeAllResult> {
    return this.probes.probeAll(regions, options);
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
    options: { attributes?: CreateTicketRequest['attributes'] } = {},
  ): Promise<TicketResponse> {
    return this.tickets.enqueue(mode, options);
  }

  /** Tells the server the player is still waiting; a ticket without heartbeats expires. */
  heartbeat(ticketId: string): Promise<TicketResponse> {
    return this.tickets.heartbeat(ticketId);
  }

  /** Leaves the queue. */
  cancel(ticketId: string): Promise<TicketResponse> {
    return this.tickets.cancel(ticketId);
  }

  /** The ticket as it is now, with why it is not matched yet while SEARCHING. */
  ticket(ticketId: string): Promise<TicketResponse> {
    return this.tickets.ticket(ticketId);
  }

  /**
   * Heartbeats `ticketId` until stopped, until the ticket leaves SEARCHING/MATCHED, or until the
   * server answers 404 / 409 TICKET_FINISHED. Beats never overlap; the timers are unref'd, so the
   * loop alone does not keep a process alive.
   */
  startHeartbeats(ticketId: string, options: HeartbeatOptions = {}): HeartbeatHandle {
    return this.tickets.startHeartbeats(ticketId, options);
  }

  /**
   * Polls the ticket until `predicate` holds and returns it; throws TicketWaitTimeoutError after
   * `timeoutMs`. For tests and demos: a real client follows notifications instead.
   */
  waitForTicket(
    ticketId: string,
    predicate: (ticket: TicketResponse) => boolean,
    options: WaitForTicketOptions = {},
  ): Promise<TicketResponse> {
    return this.tickets.waitForTicket(ticketId, predicate, options);
  }

  // ---- Parties -------------------------------------------------------------------------------

  /**
   * Creates a party led by this player; the answer's `inviteCode` (shown once) lets others join.
   * Retried with one Idempotency-Key, so a lost answer is replayed, code included.
   */
  createParty(): Promise<PartyResponse> {
    return this.parties.create();
  }

  /** Joins the party of `inviteCode`; joining a party one is already in answers it again. */
  joinParty(inviteCode: string): Promise<PartyResponse> {
    return this.parties.join(inviteCode);
  }

  /** This player's party: its members and whether each has probed (a party enqueue needs all). */
  party(): Promise<PartyResponse> {
    return this.parties.current();
  }

  /** Leaves the party (the leader leaving disbands it). */
  leaveParty(): Promise<void> {
    return this.parties.leave();
  }

  /** Disbands the party (the leader only). */
  disbandParty(): Promise<void> {
    return this.parties.disband();
  }

  /**
   * The leader queues the whole party for `mode`: one ticket per member, all matched together onto
   * one team. Each member heartbeats its own ticket (the leader's client sees all of them here; a
   * member's finds its own with `waitForPartyTicket`); a member's cancel or missed heartbeats take
   * the whole party out. `attributes` are every member's; `memberRoles` (player id -> roles) a
   * member's own roles in a mode with a roles rule.
   */
  enqueueParty(
    mode: string,
    options: Omit<CreatePartyTicketRequest, 'mode'> = {},
  ): Promise<PartyTicketResponse> {
    return this.parties.enqueue(mode, options);
  }

  /**
   * A party member's own ticket once the leader queued the party: polls the party until this
   * player's member entry names a live party ticket. Needs this client's session (createSession).
   */
  waitForPartyTicket(options: WaitForTicketOptions = {}): Promise<string> {
    return this.parties.waitForOwnTicket(options);
  }

  // ---- Block lists ----------------------------------------------------------------------------

  /** The players this player blocked (oldest first) and how many the list may hold. */
  blockList(): Promise<BlockListResponse> {
    return this.required({ method: 'GET', path: PlayerRoutes.blocks, retry: 'safe' });
  }

  /**
   * Blocks a player: the matcher never puts the two in one match, whoever blocked whom. A repeat
   * changes nothing; an avoided player moves to this list; a full list is a 409 BLOCK_LIST_FULL.
   */
  blockPlayer(playerId: string): Promise<BlockListResponse> {
    return this.required({ method: 'PUT', path: PlayerRoutes.block(playerId), retry: 'safe' });
  }

  /** Unblocks a player (one not on the list changes nothing). */
  unblockPlayer(playerId: string): Promise<BlockListResponse> {
    return this.required({ method: 'DELETE', path: PlayerRoutes.block(playerId), retry: 'safe' });
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
    return this.matches.subscribe(handlers, options);
  }

  /**
   * A match's history after revision `after` (0: all of it) and its current state: what the
   * notification socket would replay (`GET /v1/matches/{id}/events?after=N`).
   */
  matchEvents(matchId: string, after = 0): Promise<MatchEventsResponse> {
    return this.matches.matchEvents(matchId, after);
  }

  /**
   * Where and how this player joins `matchId` (server endpoint, team, join token). Served from
   * ASSIGNMENT_READY until the match ends; before that the API answers 409 ASSIGNMENT_NOT_READY,
   * after it 410 MATCH_ENDED (the problem's `matchState` and `endReason` say how), each thrown as
   * a MatchplaneApiError. See `waitForAssignment`.
   */
  assignment(matchId: string): Promise<AssignmentResponse> {
    return this.matches.assignment(matchId);
  }

  /**
   * Polls `assignment(matchId)` while it answers 409 ASSIGNMENT_NOT_READY (the server is still
   * being allocated or has not registered). Throws AssignmentUnavailableError (with the match's
   * end reason) as soon as the match has ended (410 MATCH_ENDED, e.g. FAILED NO_SHOW), AssignmentWaitTimeoutError after
   * `timeoutMs`, and any other API error at once. A client following notifications can call
   * `assignment` once ASSIGNMENT_READY arrives instead.
   */
  waitForAssignment(
    matchId: string,
    options: WaitForAssignmentOptions = {},
  ): Promise<AssignmentResponse> {
    return this.matches.waitForAssignment(matchId, options);
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
    return this.matches.joinMatch(assignment, options);
  }

  // ---- Internals ----------------------------------------------------------------------------

  private send<T>(request: PlayerCall, withToken = true): Promise<T | undefined> {
    const token = withToken ? this.currentToken : undefined;
    return this.http.request<T>({ ...request, ...(token !== undefined ? { token } : {}) });
  }

  /** A call whose success always has a body; an empty one is a contract violation worth a clear error. */
  private async required<T>(request: PlayerCall, withToken = true): Promise<T> {
    const body = await this.send<T>(request, withToken);
    if (body === undefined)
      throw new Error(`${request.method} ${request.path} answered without a body`);
    return body;
  }
}
