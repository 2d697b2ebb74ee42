/**
 * The player-facing HTTP contract (request and response bodies), shared by the API's DTOs and the
 * SDK. Every route is served under each of ROUTE_PREFIXES.
 */

/** Header every ticket mutation requires (other mutating player routes accept it). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export const PlayerRoutes = {
  sessions: 'sessions',
  currentSession: 'sessions/current',
  probeChallenge: (region: string) => `probes/${encodeURIComponent(region)}/challenge`,
  probeAnswer: (region: string) => `probes/${encodeURIComponent(region)}/answer`,
  probeMeasurements: 'probes/measurements',
  queueOptions: 'queue/options',
  tickets: 'queue/tickets',
  ticket: (ticketId: string) => `queue/tickets/${encodeURIComponent(ticketId)}`,
  ticketHeartbeat: (ticketId: string) => `queue/tickets/${encodeURIComponent(ticketId)}/heartbeat`,
  assignment: (matchId: string) => `matches/${encodeURIComponent(matchId)}/assignment`,
  matchHistory: 'matches/history',
  matchAccept: (matchId: string) => `matches/${encodeURIComponent(matchId)}/accept`,
  matchDecline: (matchId: string) => `matches/${encodeURIComponent(matchId)}/decline`,
  parties: 'parties',
  partyJoin: 'parties/join',
  currentParty: 'parties/current',
  currentPartyLeave: 'parties/current/leave',
  partyTickets: 'queue/party-tickets',
  blocks: 'blocks',
  block: (playerId: string) => `blocks/${encodeURIComponent(playerId)}`,
  avoids: 'avoids',
  avoid: (playerId: string) => `avoids/${encodeURIComponent(playerId)}`,
  lobbies: 'lobbies',
  lobbyJoin: 'lobbies/join',
  currentLobby: 'lobbies/current',
  currentLobbyLeave: 'lobbies/current/leave',
  currentLobbyKick: 'lobbies/current/kick',
  currentLobbyTeams: 'lobbies/current/teams',
  currentLobbyStart: 'lobbies/current/start',
} as const;

/** POST /v1/sessions. `provider` defaults to "guest". */
export interface CreateSessionRequest {
  provider?: string;
  /**
   * Guest: the device secret returned when the guest was created (absent: a new guest).
   * Other providers: their credential, e.g. the identity provider's signed JWT.
   */
  credential?: string;
}

export interface SessionResponse {
  /** Opaque bearer token (256 random bits); the server keeps only its hash. */
  token: string;
  expiresAt: string;
  playerId: string;
  /** Only when a new guest was created: keep it to resume this player on this device. */
  deviceSecret?: string;
}

export interface ProbeChallengeResponse {
  challengeId: string;
  region: string;
  /** Echo it back in the answer; single use. */
  nonce: string;
  issuedAt: string;
  expiresAt: string;
}

/** POST /v1/probes/{region}/answer */
export interface ProbeAnswerRequest {
  challengeId: string;
  nonce: string;
}

export interface ProbeAnswerResponse {
  region: string;
  /** Server receive time minus issue time of this challenge. */
  rttMs: number;
  /** The robust estimate placement uses (median of the retained samples). */
  estimateMs: number;
  samplesMs: number[];
}

/**
 * POST /v1/probes/measurements: a measurement a region's probe edge signed, handed over unchanged
 * (docs/PROBES.md). Single use.
 */
export interface SignedProbeMeasurement {
  measurementId: string;
  playerId: string;
  region: string;
  samplesMs: readonly number[];
  measuredAt: string;
  keyId: string;
  signature: string;
}

export interface ProbeMeasurementResponse extends ProbeAnswerResponse {
  measurementId: string;
}

export interface QueueModeOption {
  mode: string;
  /** The largest team's size (the largest party the mode takes). */
  teamSize: number;
  teamCount: number;
  /** Each team's size in team order: [4, 1] for 4 hunters v 1 monster, [4, 4] for 4 v 4. */
  teamSizes: number[];
  /**
   * Fill steps: once a match's oldest searcher has waited afterMs, it may start with minPlayers
   * (whole teams) or more. Absent: matches start full.
   */
  fill?: { afterMs: number; minPlayers: number }[];
  /** Tickets searching in this mode now (the candidate projection's count). */
  queueDepth: number;
  /** The attributes a ticket of this mode may or must carry (QUEUE_MODE_ATTRIBUTES); [] for none. */
  attributes: TicketAttributeOption[];
  /**
   * How long a ticket may search (ms, from its enqueue) before it ends EXPIRED with endReason
   * SEARCH_TIMED_OUT; absent: it searches until matched or cancelled.
   */
  searchTimeoutMs?: number;
  /**
   * The mode's ready check: a match waits this long (ms) for every player to accept
   * (`POST /v1/matches/{id}/accept`) before it is cancelled; absent: no ready check.
   */
  acceptanceTimeoutMs?: number;
  /**
   * How long a player who left a running match of this mode may rejoin it (ms) before it is
   * ABANDONED (a cooldown and a rated loss); absent: no time to come back.
   */
  rejoinGraceMs?: number;
}

/**
 * One attribute a mode declares: a string from `values`, a number within [min, max], or a set (a
 * non-empty list of distinct strings from `values`, such as the platforms a player accepts).
 */
export type TicketAttributeOption =
  | { name: string; type: 'string'; values: string[]; required: boolean; default?: string }
  | { name: string; type: 'set'; values: string[]; required: boolean; default?: string[] }
  | {
      name: string;
      type: 'number';
      min: number;
      max: number;
      integer: boolean;
      required: boolean;
      default?: number;
    };

/** GET /v1/queue/options: what a client may queue for and probe. */
export interface QueueOptionsResponse {
  modes: QueueModeOption[];
  regions: string[];
  heartbeatIntervalMs: number;
  /**
   * Each region's probe edge endpoints (PROBE_EDGES), http(s):// and udp:// URLs in order; a
   * region left out (or every region, when absent) is probed at the API itself.
   */
  probeEdges?: Record<string, string[]>;
}

/** A ticket attribute's value: a string, a number, or a set attribute's list of values. */
export type TicketAttributeValue = string | number | string[];

/** POST /v1/queue/tickets */
export interface CreateTicketRequest {
  mode: string;
  /**
   * The ticket's attributes as the mode declares them (GET /v1/queue/options, `modes[].attributes`):
   * an unknown name, a wrong type, a value not allowed or out of range, or a missing required one
   * is a 400 naming the attribute. Left out: every attribute takes its default.
   */
  attributes?: Record<string, TicketAttributeValue>;
}

/** Why a searching ticket is not matched yet, from the matcher's last pass. */
export interface TicketExplanation {
  code: string;
  message: string;
  evaluatedAt: string;
}

export interface TicketResponse {
  id: string;
  playerId: string;
  mode: string;
  state: string;
  revision: number;
  /** Regions with a server-measured RTT, sorted. */
  regionsMeasured: string[];
  predictedRttMs: Record<string, number>;
  enqueuedAt: string;
  lastHeartbeatAt: string;
  /** Seconds since enqueue (until the ticket left the queue, if it has). */
  waitSeconds: number;
  /** The ticket's attributes, defaults filled in; {} for a mode without attributes. */
  attributes: Record<string, TicketAttributeValue>;
  matchId?: string;
  /**
   * Why the ticket ended, once it has (absent while live and for COMPLETED): PLAYER_CANCELLED,
   * MATCH_CANCELLED, HEARTBEAT_TIMEOUT, NO_SHOW (this player never joined; a cooldown follows),
   * MATCH_FAILED (GET the match's assignment for the match's own end reason), or for a party
   * member PARTY_MEMBER_CANCELLED / PARTY_MEMBER_EXPIRED (a party mate cancelled or went silent),
   * or SEARCH_TIMED_OUT (nobody matched it within its mode's `searchTimeoutMs`; queue again),
   * or RULES_CHANGED (an operator's new rule set no longer takes the ticket: an attribute value
   * it no longer declares, a party larger than the mode's teams; queue again under the new rules).
   */
  endReason?: string;
  /** Present while SEARCHING once a matcher pass has looked at the ticket. */
  explanation?: TicketExplanation;
  /**
   * Present while SEARCHING: the median wait (s) of the players matched recently in this mode and
   * the ticket's lowest-RTT region; null when no match was formed there within
   * QUEUE_WAIT_ESTIMATE_WINDOW_SECONDS.
   */
  estimatedWaitSeconds?: number | null;
  /** Set on a party member's ticket: the party ticket shared by the party's tickets, and its size. */
  partyTicketId?: string;
  partySize?: number;
}

/** POST /v1/parties/join */
export interface JoinPartyRequest {
  /** The code the leader got from POST /v1/parties. */
  inviteCode: string;
}

export interface PartyMember {
  playerId: string;
  joinedAt: string;
  /** Whether the member has a server-measured RTT to at least one region (required to enqueue). */
  probed: boolean;
  /** Regions with a server-measured RTT, sorted. */
  regionsMeasured: string[];
  /** The member's live ticket of a party ticket (the party is queued or in a match), if any. */
  ticketId?: string;
}

/** GET /v1/parties/current, and the answer of create, join and leave-free changes. */
export interface PartyResponse {
  partyId: string;
  leaderId: string;
  /** Oldest first (the leader first). */
  members: PartyMember[];
  /** The largest party a mode's team holds (the largest team size of the configured modes). */
  maxSize: number;
  inviteExpiresAt: string;
  /** Only in the answer of POST /v1/parties, to the leader: the server keeps only its hash. */
  inviteCode?: string;
}

/** POST /v1/queue/party-tickets (the leader): the party queues as one ticket. */
export interface CreatePartyTicketRequest {
  mode: string;
  /** Every member's attributes, as a solo ticket's (CreateTicketRequest.attributes). */
  attributes?: Record<string, TicketAttributeValue>;
  /**
   * Each member's roles (the mode's roles rule: its set attribute), by player id: a member left
   * out plays the roles of `attributes` (the leader's). A 400 names `memberRoles.<playerId>`.
   */
  memberRoles?: Record<string, string[]>;
}

/** One ticket per member, sharing `partyTicketId`; each member heartbeats and may cancel its own. */
export interface PartyTicketResponse {
  partyTicketId: string;
  partyId: string;
  mode: string;
  tickets: TicketResponse[];
}

/** POST /v1/lobbies: a private lobby for `mode`. */
export interface CreateLobbyRequest {
  mode: string;
  /** Most members, 2 up to the mode's players (team size x team count); default the latter. */
  size?: number;
  /** Where its match is placed; absent: the offered region with the lowest worst member RTT. */
  region?: string;
  /** A ranked lobby's result rates its players; default false (unranked: no rating changes). */
  ranked?: boolean;
}

/** POST /v1/lobbies/join */
export interface JoinLobbyRequest {
  inviteCode: string;
}

/** POST /v1/lobbies/current/kick (the owner) */
export interface KickLobbyMemberRequest {
  playerId: string;
}

/** POST /v1/lobbies/current/teams (the owner): team i (0-based) holds `teams[i]`'s players. */
export interface SetLobbyTeamsRequest {
  teams: string[][];
}

export interface LobbyMember {
  playerId: string;
  joinedAt: string;
  /** The team the owner put the member in (0-based); absent: placed at start. */
  team?: number;
  /** Once STARTED: the member's ticket, MATCHED to the lobby's match (follow it as a queued one). */
  ticketId?: string;
}

/** GET /v1/lobbies/current, and the answer of create, join, kick, teams and start. */
export interface LobbyResponse {
  lobbyId: string;
  ownerId: string;
  mode: string;
  size: number;
  teamCount: number;
  /** The largest team's size. */
  teamSize: number;
  /** Each team's size in team order (`hunt:4+1`: [4, 1]). */
  teamSizes: number[];
  region?: string;
  ranked: boolean;
  state: 'OPEN' | 'STARTED';
  /** Oldest first (the owner first). */
  members: LobbyMember[];
  /** When the lobby expires unless something changes it first (each change pushes it back). */
  expiresAt: string;
  /** Once STARTED: its match. */
  matchId?: string;
  /** Only in the answer of POST /v1/lobbies, to the owner: the server keeps only its hash. */
  inviteCode?: string;
}

/**
 * GET /v1/matches/{id}/assignment: where and how this player joins its match, once the server
 * registered (ASSIGNMENT_READY) and until the match ends. Connect to `ws://<endpoint>/join` and
 * send `{"type":"join","token": joinToken}` (apps/game-server/README.md).
 */
export interface AssignmentResponse {
  matchId: string;
  state: string;
  /** The region the match was placed in (where the matcher found its players' RTT best). */
  region: string;
  /**
   * The region its game server actually runs in: `region`, or the next-best region for the
   * match's players when `region` had no free server (the allocator's fallback policy).
   */
  serverRegion: string;
  serverId: string;
  endpoint: string;
  team: number;
  joinToken: string;
  expiresAt: string;
}

/**
 * GET /v1/blocks, and the answer of PUT and DELETE /v1/blocks/{playerId}: the players this
 * player blocked. The matcher never puts a player in one match with a player it blocked, or one
 * that blocked it.
 */
export interface BlockListResponse {
  /** Oldest block first. */
  blocked: BlockedPlayerEntry[];
  /** How many players a list may hold (PLAYER_BLOCK_LIST_MAX_ENTRIES). */
  maxEntries: number;
}

export interface BlockedPlayerEntry {
  playerId: string;
  blockedAt: string;
}

/**
 * GET /v1/avoids, and the answer of PUT and DELETE /v1/avoids/{playerId}: the players this
 * player avoids. The matcher puts a player in one match with a player it avoids, or one that
 * avoids it, only when nothing else fits (docs/decisions/2026-12-07-avoid-lists.md).
 */
export interface AvoidListResponse {
  /** Oldest entry first. */
  avoided: AvoidedPlayerEntry[];
  /** How many players the list may hold (PLAYER_AVOID_LIST_MAX_ENTRIES). */
  maxEntries: number;
}

export interface AvoidedPlayerEntry {
  playerId: string;
  avoidedAt: string;
}
