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
  signature: string;
}

/** GET /v1/servers/{id}/roster */
export interface RosterResponse {
  matchId: string;
  serverId: string;
  endpoint: string;
  mode: string;
  region: string;
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
