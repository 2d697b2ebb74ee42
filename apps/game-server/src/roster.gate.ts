import type { RosterResponse } from '@matchplane/contracts';
import {
  isCanonicalUuid,
  type JoinTokenRejectionReason,
  type JoinTokenVerifier,
  type RosterEntry,
  type RosterRejectionReason,
} from '@matchplane/join-auth';

/** The match this server was launched for (from its environment, never from the roster). */
export interface RosterExpectation {
  readonly serverId: string;
  readonly matchId: string;
}

export interface RosterPlayer {
  readonly playerId: string;
  readonly team: number;
}

/** A roster that passed the gate: every player it admits, by id. */
export interface VerifiedRoster {
  readonly matchId: string;
  readonly serverId: string;
  readonly endpoint: string;
  readonly mode: string;
  readonly players: ReadonlyMap<string, RosterPlayer>;
  /** Every team index on the roster, ascending. */
  readonly teams: readonly number[];
  /** Id of the key that signed the manifest. */
  readonly keyId: string;
}

export type RosterGateRejectionReason = RosterRejectionReason | JoinTokenRejectionReason;

export interface RosterGateRejection {
  readonly ok: false;
  readonly reason: RosterGateRejectionReason;
  /** The entry whose token was refused, when one was. */
  readonly playerId?: string;
  /** For logs; never contains a token or key material. */
  readonly message: string;
}

export type RosterCheck =
  { readonly ok: true; readonly roster: VerifiedRoster } | RosterGateRejection;

/** Why a join was refused: a bad token, or a good token for someone not on the roster. */
export type JoinAdmission =
  | { readonly ok: true; readonly player: RosterPlayer }
  | {
      readonly ok: false;
      readonly refusal: 'INVALID_TOKEN';
      readonly reason: JoinTokenRejectionReason;
      readonly message: string;
    }
  | {
      readonly ok: false;
      readonly refusal: 'NOT_ON_ROSTER';
      readonly playerId: string;
      readonly message: string;
    };

/**
 * Decides, offline with the server's key set, whether the roster it was handed is the one the
 * allocator signed, and later whether a connecting player's token admits them. The roster is
 * checked whole (manifest signature and binding, entry count, canonical order, digest) and then
 * token by token (signature, server, match, expiry), so a truncated, reordered or altered roster
 * is refused before the server registers.
 */
export class RosterGate {
  constructor(
    private readonly verifier: JoinTokenVerifier,
    private readonly expect: RosterExpectation,
  ) {}

  check(roster: RosterResponse, now: number): RosterCheck {
    const shapeProblem = rosterShapeProblem(roster);
    if (shapeProblem !== undefined) return reject('MALFORMED', `roster: ${shapeProblem}`);
    if (roster.serverId !== this.expect.serverId) {
      return reject('WRONG_SERVER', `roster is for server ${JSON.stringify(roster.serverId)}`);
    }
    if (roster.matchId !== this.expect.matchId) {
      return reject('WRONG_MATCH', `roster is for match ${roster.matchId}`);
    }

    const expectation = { ...this.expect, now };
    // The digest commits to (playerId, token) pairs in the order given: pass them exactly as
    // published, so a reordered roster is caught rather than silently sorted back.
    const entries: RosterEntry[] = roster.entries.map((entry) => ({
      playerId: entry.playerId,
      token: entry.joinToken,
    }));
    const manifest = this.verifier.verifyRoster(roster.manifest, entries, expectation);
    if (!manifest.ok) return reject(manifest.reason, manifest.message);

    const players = new Map<string, RosterPlayer>();
    for (const entry of roster.entries) {
      const token = this.verifier.verify(entry.joinToken, expectation);
      if (!token.ok) {
        return reject(token.reason, `token of ${entry.playerId}: ${token.message}`, entry.playerId);
      }
      players.set(entry.playerId, { playerId: entry.playerId, team: entry.team });
    }
    return {
      ok: true,
      roster: {
        matchId: roster.matchId,
        serverId: roster.serverId,
        endpoint: roster.endpoint,
        mode: roster.mode,
        players,
        teams: [...new Set(roster.entries.map((entry) => entry.team))].sort((a, b) => a - b),
        keyId: manifest.manifest.keyId,
      },
    };
  }

  /** Whether `token` admits a player to `roster` now; checked with the keys alone, no API call. */
  admit(roster: VerifiedRoster, token: string, now: number): JoinAdmission {
    const verified = this.verifier.verify(token, { ...this.expect, now });
    if (!verified.ok) {
      return {
        ok: false,
        refusal: 'INVALID_TOKEN',
        reason: verified.reason,
        message: verified.message,
      };
    }
    const player = roster.players.get(verified.claims.playerId);
    if (player === undefined) {
      return {
        ok: false,
        refusal: 'NOT_ON_ROSTER',
        playerId: verified.claims.playerId,
        message: `player ${verified.claims.playerId} is not on the roster`,
      };
    }
    return { ok: true, player };
  }
}

function reject(
  reason: RosterGateRejectionReason,
  message: string,
  playerId?: string,
): RosterGateRejection {
  return { ok: false, reason, message, ...(playerId !== undefined ? { playerId } : {}) };
}

/** The response arrives as JSON: check the parts the gate reads before trusting their types. */
function rosterShapeProblem(roster: unknown): string | undefined {
  if (typeof roster !== 'object' || roster === null) return 'must be an object';
  const r = roster as Record<string, unknown>;
  if (typeof r.serverId !== 'string') return 'serverId must be a string';
  if (typeof r.matchId !== 'string') return 'matchId must be a string';
  if (typeof r.endpoint !== 'string') return 'endpoint must be a string';
  if (typeof r.mode !== 'string') return 'mode must be a string';
  if (!Array.isArray(r.entries)) return 'entries must be an array';
  for (const [index, entry] of (r.entries as unknown[]).entries()) {
    if (typeof entry !== 'object' || entry === null) return `entry ${index} must be an object`;
    const e = entry as Record<string, unknown>;
    if (!isCanonicalUuid(e.playerId)) return `entry ${index}: playerId must be a canonical uuid`;
    if (typeof e.joinToken !== 'string') return `entry ${index}: joinToken must be a string`;
    if (typeof e.team !== 'number' || !Number.isSafeInteger(e.team) || e.team < 0) {
      return `entry ${index}: team must be a non-negative integer`;
    }
  }
  return undefined;
}
