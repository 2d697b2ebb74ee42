import type { RosterEntryView, RosterResponse } from '@matchplane/contracts';
import {
  isCanonicalUuid,
  manifestRevision,
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
  /** The roster revision the manifest signs (1: the roster the match was allocated with). */
  readonly revision: number;
  /** Each player's join token as published; a later revision must carry it unchanged. */
  readonly tokens: ReadonlyMap<string, string>;
}

/**
 * Refusals of a later roster revision, beyond those of the first roster: one that is not newer
 * than the current (STALE_REVISION), whose unsigned `revision` disagrees with the signed one
 * (REVISION_MISMATCH), that changes a player's token or team (ROSTER_ENTRY_CHANGED), or that
 * drops a connected player (CONNECTED_PLAYER_DROPPED).
 */
export type RosterRevisionRejectionReason =
  'STALE_REVISION' | 'REVISION_MISMATCH' | 'ROSTER_ENTRY_CHANGED' | 'CONNECTED_PLAYER_DROPPED';

export type RosterGateRejectionReason =
  RosterRejectionReason | JoinTokenRejectionReason | RosterRevisionRejectionReason;

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

/** A later revision that passed the gate, with the players it adds to the current one. */
export type RosterRevisionCheck =
  | {
      readonly ok: true;
      readonly roster: VerifiedRoster;
      /** Players on the new revision who were not on the current one, ascending. */
      readonly added: readonly RosterPlayer[];
    }
  | RosterGateRejection;

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
 * is refused before the server registers. The same holds for each later revision a backfill
 * publishes, which must moreover be newer and keep what the server already admitted.
 */
export class RosterGate {
  constructor(
    private readonly verifier: JoinTokenVerifier,
    private readonly expect: RosterExpectation,
  ) {}

  check(roster: RosterResponse, now: number): RosterCheck {
    const published = this.verifyPublished(roster, now);
    if (!published.ok) return published;
    for (const entry of roster.entries) {
      const token = this.verifyToken(entry, now);
      if (token !== undefined) return token;
    }
    return published;
  }

  /**
   * Whether `next`, a later revision a backfill published, may replace `current`: it must verify
   * as a roster (so a truncated, reordered or altered one is refused), sign a revision newer than
   * the current one, carry every player already on the current roster with the identical token
   * and team (a token does not bind to a revision, and the digest covers it, so carried-over
   * tokens are not checked for expiry again: they may have expired since their player joined),
   * still list every connected player, and hold a fully valid token (signature, server, match,
   * expiry) for each player it adds.
   */
  checkRevision(
    current: VerifiedRoster,
    next: RosterResponse,
    now: number,
    connectedPlayerIds: Iterable<string>,
  ): RosterRevisionCheck {
    const published = this.verifyPublished(next, now);
    if (!published.ok) return published;
    const roster = published.roster;
    if (roster.revision <= current.revision) {
      return reject(
        'STALE_REVISION',
        `roster revision ${roster.revision} is not newer than the current revision ${current.revision}`,
      );
    }

    const added: RosterPlayer[] = [];
    for (const entry of next.entries) {
      const held = current.players.get(entry.playerId);
      if (held === undefined) {
        const token = this.verifyToken(entry, now);
        if (token !== undefined) return token;
        added.push({ playerId: entry.playerId, team: entry.team });
      } else if (
        held.team !== entry.team ||
        current.tokens.get(entry.playerId) !== entry.joinToken
      ) {
        return reject(
          'ROSTER_ENTRY_CHANGED',
          `revision ${roster.revision} changes the ${held.team !== entry.team ? 'team' : 'join token'} of ${entry.playerId}`,
          entry.playerId,
        );
      }
    }
    for (const playerId of connectedPlayerIds) {
      if (!roster.players.has(playerId)) {
        return reject(
          'CONNECTED_PLAYER_DROPPED',
          `revision ${roster.revision} drops connected player ${playerId}`,
          playerId,
        );
      }
    }
    return { ok: true, roster, added };
  }

  /**
   * The roster's shape, binding, manifest and revision label, without each token's own check:
   * what the first roster and every later revision must pass alike.
   */
  private verifyPublished(roster: RosterResponse, now: number): RosterCheck {
    const shapeProblem = rosterShapeProblem(roster);
    if (shapeProblem !== undefined) return reject('MALFORMED', `roster: ${shapeProblem}`);
    if (roster.serverId !== this.expect.serverId) {
      return reject('WRONG_SERVER', `roster is for server ${JSON.stringify(roster.serverId)}`);
    }
    if (roster.matchId !== this.expect.matchId) {
      return reject('WRONG_MATCH', `roster is for match ${roster.matchId}`);
    }

    // The digest commits to (playerId, token) pairs in the order given: pass them exactly as
    // published, so a reordered roster is caught rather than silently sorted back.
    const entries: RosterEntry[] = roster.entries.map((entry) => ({
      playerId: entry.playerId,
      token: entry.joinToken,
    }));
    const manifest = this.verifier.verifyRoster(roster.manifest, entries, { ...this.expect, now });
    if (!manifest.ok) return reject(manifest.reason, manifest.message);
    const revision = manifestRevision(manifest.manifest);
    // The response's own revision is not signed: one that disagrees with the manifest is a
    // roster relabelled as another revision.
    if (roster.revision !== undefined && roster.revision !== revision) {
      return reject(
        'REVISION_MISMATCH',
        `roster claims revision ${String(roster.revision)} but its manifest signs revision ${revision}`,
      );
    }

    return {
      ok: true,
      roster: {
        matchId: roster.matchId,
        serverId: roster.serverId,
        endpoint: roster.endpoint,
        mode: roster.mode,
        players: new Map(
          roster.entries.map((entry) => [
            entry.playerId,
            { playerId: entry.playerId, team: entry.team },
          ]),
        ),
        teams: [...new Set(roster.entries.map((entry) => entry.team))].sort((a, b) => a - b),
        keyId: manifest.manifest.keyId,
        revision,
        tokens: new Map(roster.entries.map((entry) => [entry.playerId, entry.joinToken])),
      },
    };
  }

  /** A rejection naming the player when their token does not admit them now, else undefined. */
  private verifyToken(entry: RosterEntryView, now: number): RosterGateRejection | undefined {
    const token = this.verifier.verify(entry.joinToken, { ...this.expect, now });
    if (token.ok) return undefined;
    return reject(token.reason, `token of ${entry.playerId}: ${token.message}`, entry.playerId);
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
