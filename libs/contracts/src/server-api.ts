/**
 * The game-server-facing HTTP contract: what a dedicated server calls with its workload
 * credential (`Authorization: Bearer <credential>`, issued by the allocator and bound to one
 * server id). Served under each of ROUTE_PREFIXES.
 */

export const ServerRoutes = {
  register: (serverId: string) => `servers/${encodeURIComponent(serverId)}/register`,
  roster: (serverId: string) => `servers/${encodeURIComponent(serverId)}/roster`,
  initialConnect: (serverId: string) => `servers/${encodeURIComponent(serverId)}/initial-connect`,
  result: (serverId: string) => `servers/${encodeURIComponent(serverId)}/result`,
  heartbeat: (serverId: string) => `servers/${encodeURIComponent(serverId)}/heartbeat`,
  backfills: (serverId: string) => `servers/${encodeURIComponent(serverId)}/backfills`,
  backfill: (serverId: string, requestId: string) =>
    `servers/${encodeURIComponent(serverId)}/backfills/${encodeURIComponent(requestId)}`,
  backfillAccept: (serverId: string, requestId: string) =>
    `servers/${encodeURIComponent(serverId)}/backfills/${encodeURIComponent(requestId)}/accept`,
  backfillConnect: (serverId: string, requestId: string) =>
    `servers/${encodeURIComponent(serverId)}/backfills/${encodeURIComponent(requestId)}/connect`,
  playerLeft: (serverId: string, playerId: string) =>
    `servers/${encodeURIComponent(serverId)}/players/${encodeURIComponent(playerId)}/left`,
  playerRejoined: (serverId: string, playerId: string) =>
    `servers/${encodeURIComponent(serverId)}/players/${encodeURIComponent(playerId)}/rejoined`,
} as const;

/** Environment the allocator's providers hand a game server (the local provider sets these). */
export const GameServerEnv = {
  SERVER_ID: 'MATCHPLANE_SERVER_ID',
  CREDENTIAL: 'MATCHPLANE_SERVER_CREDENTIAL',
  MATCH_ID: 'MATCHPLANE_MATCH_ID',
  JOIN_KEYS_FILE: 'MATCHPLANE_JOIN_KEYS_FILE',
  API_URL: 'MATCHPLANE_API_URL',
  PORT: 'MATCHPLANE_SERVER_PORT',
} as const;

export const SERVER_PROTOCOL_VERSION = 1;

/**
 * How a pooled (static) server learns its match: the allocator POSTs this JSON to the server's
 * hand-off URL (allocator STATIC_HANDOFF_URL). A retried allocation may hand the same match over
 * again with a fresh credential, which replaces the earlier one (that one stops working).
 */
export interface ServerHandOff {
  serverId: string;
  matchId: string;
  credential: string;
  apiUrl: string;
  endpoint: string;
}

/**
 * On Agones the allocator hands the same over as annotations on the allocated GameServer (the
 * server reads them through the Agones SDK); a retried hand-off overwrites them.
 */
export const AgonesHandOffAnnotations = {
  MATCH_ID: 'matchplane.dev/match-id',
  CREDENTIAL: 'matchplane.dev/credential',
  API_URL: 'matchplane.dev/api-url',
} as const;

/** The label a GameServer allocated for a match carries, so a retried allocation finds it again. */
export const AGONES_MATCH_LABEL = 'matchplane.dev/match-id';

/** POST /v1/servers/{id}/register */
export interface RegisterServerRequest {
  protocolVersion: number;
  /** The image (or build) the server runs, e.g. "sha256:…"; recorded for operators. */
  imageDigest: string;
}

export interface RegisterServerResponse {
  matchId: string;
  serverId: string;
  /** ASSIGNMENT_READY once registered: players may now connect. */
  state: string;
  revision: number;
}

export interface RosterEntryView {
  playerId: string;
  team: number;
  /** The player's join authorisation (libs/join-auth token), verified offline by the server. */
  joinToken: string;
  expiresAt: string;
}

/** The allocator's signed manifest over the whole roster (libs/join-auth SignedRosterManifest). */
export interface RosterManifestView {
  matchId: string;
  serverId: string;
  keyId: string;
  /** SHA-256 over the canonical roster encoding, 64 lowercase hex digits (as verifyRoster expects). */
  digest: string;
  entryCount: number;
  issuedAt: number;
  /**
   * The roster revision the manifest signs: 1 for the roster the match was allocated with, one
   * more for each backfill the allocator published. Signed (libs/join-auth), so a server cannot
   * be handed an older roster as the newest.
   */
  revision: number;
  signature: string;
}

/** GET /v1/servers/{id}/roster */
export interface RosterResponse {
  matchId: string;
  serverId: string;
  endpoint: string;
  mode: string;
  region: string;
  /** The newest published roster revision (manifest.revision). */
  revision: number;
  entries: RosterEntryView[];
  manifest: RosterManifestView;
}

/** POST /v1/servers/{id}/initial-connect: who connected before the connect deadline. */
export interface InitialConnectRequest {
  connectedPlayerIds: string[];
}

export interface InitialConnectResponse {
  matchId: string;
  state: string;
  revision: number;
  /** Participants who never connected (penalised). */
  noShowPlayerIds: string[];
}

/** POST /v1/servers/{id}/result */
export interface MatchResultRequest {
  outcome: 'COMPLETED' | 'FAILED';
  /** Winning team index for COMPLETED matches with a winner; absent for a draw. */
  winningTeam?: number;
  /** Free-form per-player scores, kept with the result. */
  scores?: Record<string, number>;
}

export interface MatchResultResponse {
  matchId: string;
  state: string;
  revision: number;
}

/**
 * POST /v1/servers/{id}/heartbeat (no body): the server is alive. Send one at least every third of
 * the control plane's SERVER_HEARTBEAT_TIMEOUT_MS from registration on; a registered server silent
 * past it has its match FAILED SERVER_LOST and its allocation released (then 401 ALLOCATION_ENDED).
 */
export interface ServerHeartbeatResponse {
  matchId: string;
  serverId: string;
}

/**
 * A backfill request's states. OPEN: waiting for the matcher; MATCHED: the matcher added players
 * to the match; PUBLISHED: the allocator published a roster revision carrying them (fetch and
 * verify it, then accept); ASSIGNED: the server accepted and the players were told to connect;
 * FILLED: the server reported who connected (terminal). CANCELLED (by the server, or because the
 * match ended) and EXPIRED (no fill within the time limit) are terminal too.
 */
export const BACKFILL_STATES = [
  'OPEN',
  'MATCHED',
  'PUBLISHED',
  'ASSIGNED',
  'FILLED',
  'CANCELLED',
  'EXPIRED',
] as const;
export type BackfillStateView = (typeof BACKFILL_STATES)[number];

/** POST /v1/servers/{id}/backfills: fill `slots` open places on `team` within the time limit. */
export interface BackfillRequestBody {
  /** 0-based team index of the match. */
  team: number;
  /** How many players to add, 1 to the team's size. */
  slots: number;
  /** How long the matcher may search before the request EXPIRES; default 30, at most 300. */
  timeoutSeconds?: number;
}

export interface BackfillResponse {
  requestId: string;
  matchId: string;
  team: number;
  slots: number;
  state: BackfillStateView;
  /** Why a request was CANCELLED (SERVER_CANCELLED, MATCH_ENDED, NOT_ACCEPTED) or EXPIRED. */
  reason?: string;
  expiresAt: string;
  /** The players the matcher added (from MATCHED on), ascending. */
  playerIds: string[];
  /** The roster revision that carries them (from PUBLISHED on). */
  rosterRevision?: number;
  /** The request's own revision (its events' revision). */
  revision: number;
}

/** POST /v1/servers/{id}/backfills/{requestId}/accept: the server verified this roster revision. */
export interface BackfillAcceptRequest {
  rosterRevision: number;
}

/** POST /v1/servers/{id}/backfills/{requestId}/connect: who of the added players connected. */
export interface BackfillConnectRequest {
  connectedPlayerIds: string[];
}

export interface BackfillConnectResponse extends BackfillResponse {
  /** Added players who never connected (penalised as no-shows). */
  noShowPlayerIds: string[];
}
