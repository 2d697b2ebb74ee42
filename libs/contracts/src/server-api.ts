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
  /** base64url SHA-256 over the canonical roster encoding. */
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
