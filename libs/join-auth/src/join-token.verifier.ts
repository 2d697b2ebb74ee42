import { timingSafeEqual } from 'node:crypto';
import {
  decodeJoinClaims,
  encodeJoinClaims,
  isCanonicalUuid,
  isInstant,
  isServerId,
  type JoinClaims,
} from './join-claims.codec';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { splitJoinToken } from './join-token.codec';
import { type KeySet, MAC_BYTES } from './key-set';
import { decodeBase64Url } from './length-prefixed.codec';
import {
  encodeRosterManifest,
  rosterDigest,
  rosterEntryProblem,
  rosterManifestProblem,
  rosterOrderProblem,
  type RosterEntry,
  type RosterManifest,
} from './roster-manifest';

/**
 * Why a join token was refused. Stable: game servers log and count these, and other languages'
 * verifiers report the same names for the same vectors. Add reasons, never repurpose one.
 */
export const JoinTokenRejectionReason = {
  /** Not a token: bad shape or base64url, wrong format tag, truncated or trailing bytes, invalid claims. */
  MALFORMED: 'MALFORMED',
  /** Names a key id the verifier does not hold (never issued, or retired). */
  UNKNOWN_KEY: 'UNKNOWN_KEY',
  /** The MAC does not match under the named key nor any other held key: forged or tampered. */
  BAD_SIGNATURE: 'BAD_SIGNATURE',
  /** The MAC matches under a different held key than the one the key id names: key id swapped. */
  KEY_MISMATCH: 'KEY_MISMATCH',
  /** Issued further in the future than the allowed clock skew. */
  NOT_YET_VALID: 'NOT_YET_VALID',
  /** now is at or after expiresAt. */
  EXPIRED: 'EXPIRED',
  /** Signed for another game server. */
  WRONG_SERVER: 'WRONG_SERVER',
  /** Signed for another match than the one expected. */
  WRONG_MATCH: 'WRONG_MATCH',
} as const;
export type JoinTokenRejectionReason =
  (typeof JoinTokenRejectionReason)[keyof typeof JoinTokenRejectionReason];

/** Why a roster was refused: the token reasons that apply to a manifest, plus roster mismatches. */
export const RosterRejectionReason = {
  MALFORMED: 'MALFORMED',
  UNKNOWN_KEY: 'UNKNOWN_KEY',
  BAD_SIGNATURE: 'BAD_SIGNATURE',
  KEY_MISMATCH: 'KEY_MISMATCH',
  NOT_YET_VALID: 'NOT_YET_VALID',
  WRONG_SERVER: 'WRONG_SERVER',
  WRONG_MATCH: 'WRONG_MATCH',
  /** More or fewer entries than the manifest counts: a truncated (or padded) roster. */
  ROSTER_COUNT_MISMATCH: 'ROSTER_COUNT_MISMATCH',
  /** Entries not in ascending playerId order, or a player twice: a reordered roster. */
  ROSTER_NOT_CANONICAL: 'ROSTER_NOT_CANONICAL',
  /** The entries do not hash to the manifest's digest: an altered roster. */
  ROSTER_DIGEST_MISMATCH: 'ROSTER_DIGEST_MISMATCH',
  /** The digest matches but an entry's token is unreadable or names another player, match or server. */
  ROSTER_ENTRY_MISMATCH: 'ROSTER_ENTRY_MISMATCH',
} as const;
export type RosterRejectionReason =
  (typeof RosterRejectionReason)[keyof typeof RosterRejectionReason];

export interface Rejection<Reason extends string> {
  readonly ok: false;
  readonly reason: Reason;
  /** For logs; never contains key material. */
  readonly message: string;
}

export type JoinTokenVerification =
  { readonly ok: true; readonly claims: JoinClaims } | Rejection<JoinTokenRejectionReason>;

export type RosterVerification =
  { readonly ok: true; readonly manifest: RosterManifest } | Rejection<RosterRejectionReason>;

export interface JoinTokenExpectation {
  /** The verifying game server's own id. */
  readonly serverId: string;
  /** When set, the token must be for this match. */
  readonly matchId?: string;
  /** Unix epoch milliseconds. */
  readonly now: number;
}

export type RosterExpectation = JoinTokenExpectation;

export interface JoinTokenVerifierOptions {
  /** How far in the future issuedAt may lie, for clock drift between allocator and server. */
  readonly clockSkewMs?: number;
}

export const DEFAULT_CLOCK_SKEW_MS = 30_000;

/** Thrown by the verifier's *OrThrow conveniences; `reason` is the rejection reason. */
export class JoinAuthRejectedError extends JoinAuthError {
  override name = 'JoinAuthRejectedError';

  constructor(
    readonly reason: JoinTokenRejectionReason | RosterRejectionReason,
    message: string,
  ) {
    super(JoinAuthErrorCode.REJECTED, message, { reason });
  }
}

function reject<Reason extends string>(reason: Reason, message: string): Rejection<Reason> {
  return { ok: false, reason, message };
}

type KeyCheck = { ok: true } | Rejection<'UNKNOWN_KEY' | 'BAD_SIGNATURE' | 'KEY_MISMATCH'>;

/**
 * Checks join tokens and roster manifests against every current key (the game server's side),
 * selecting the key by the id inside the MAC'd bytes. Build a new verifier from the new key set
 * to add or retire keys.
 */
export class JoinTokenVerifier {
  private readonly clockSkewMs: number;

  constructor(
    private readonly keys: KeySet,
    options: JoinTokenVerifierOptions = {},
  ) {
    const clockSkewMs = options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS;
    if (!Number.isSafeInteger(clockSkewMs) || clockSkewMs < 0) {
      throw new JoinAuthError(
        JoinAuthErrorCode.INVALID_EXPECTATION,
        'clockSkewMs must be a non-negative integer',
      );
    }
    this.clockSkewMs = clockSkewMs;
  }

  get keyIds(): string[] {
    return this.keys.ids();
  }

  verify(token: string, expect: JoinTokenExpectation): JoinTokenVerification {
    assertExpectation(expect);
    const parts = splitJoinToken(token);
    if (parts === undefined) {
      return reject('MALFORMED', 'token is not two unpadded base64url parts with a 32-byte MAC');
    }
    let claims: JoinClaims;
    try {
      claims = decodeJoinClaims(parts.claimBytes);
    } catch (error) {
      if (error instanceof JoinAuthError) return reject('MALFORMED', error.message);
      throw error;
    }

    const keyCheck = this.checkMac(claims.keyId, parts.claimBytes, parts.mac, (keyId) =>
      encodeJoinClaims({ ...claims, keyId }),
    );
    if (!keyCheck.ok) return keyCheck;

    const bindingRejection = this.checkBinding(claims, expect);
    if (bindingRejection !== undefined) return bindingRejection;
    if (expect.now >= claims.expiresAt) {
      return reject('EXPIRED', `token expired at ${claims.expiresAt} (now ${expect.now})`);
    }
    return { ok: true, claims };
  }

  verifyOrThrow(token: string, expect: JoinTokenExpectation): JoinClaims {
    const result = this.verify(token, expect);
    if (!result.ok) throw new JoinAuthRejectedError(result.reason, result.message);
    return result.claims;
  }

  /**
   * Checks a published roster: the manifest's signature and binding, then that the entries are
   * exactly the ones it commits to. `manifest` and `entries` may come straight from JSON; both
   * are validated here. Each player's token is still verified with verify() when they join.
   */
  verifyRoster(
    manifest: unknown,
    entries: readonly RosterEntry[],
    expect: RosterExpectation,
  ): RosterVerification {
    assertExpectation(expect);
    const problem = rosterManifestProblem(manifest);
    if (problem !== undefined) return reject('MALFORMED', `malformed roster manifest: ${problem}`);
    const m = manifest as RosterManifest & { signature?: unknown };
    const signature = typeof m.signature === 'string' ? decodeBase64Url(m.signature) : undefined;
    if (signature === undefined || signature.length !== MAC_BYTES) {
      return reject(
        'MALFORMED',
        'roster manifest signature must be a 32-byte unpadded base64url MAC',
      );
    }
    const signed: RosterManifest = {
      matchId: m.matchId,
      serverId: m.serverId,
      keyId: m.keyId,
      digest: m.digest,
      entryCount: m.entryCount,
      issuedAt: m.issuedAt,
      ...(m.revision === undefined ? {} : { revision: m.revision }),
    };

    const keyCheck = this.checkMac(signed.keyId, encodeRosterManifest(signed), signature, (keyId) =>
      encodeRosterManifest({ ...signed, keyId }),
    );
    if (!keyCheck.ok) return keyCheck;
    const bindingRejection = this.checkBinding(signed, expect);
    if (bindingRejection !== undefined) return bindingRejection;

    // Typed callers cannot get here; callers passing parsed JSON can.
    const rawEntries: unknown = entries;
    if (!Array.isArray(rawEntries)) return reject('MALFORMED', 'roster entries must be an array');
    if (entries.length !== signed.entryCount) {
      return reject(
        'ROSTER_COUNT_MISMATCH',
        `roster has ${entries.length} entries; its manifest commits to ${signed.entryCount}`,
      );
    }
    for (const [index, entry] of entries.entries()) {
      const entryProblem = rosterEntryProblem(entry, index);
      if (entryProblem !== undefined)
        return reject('MALFORMED', `malformed roster: ${entryProblem}`);
    }
    const orderProblem = rosterOrderProblem(entries);
    if (orderProblem !== undefined) return reject('ROSTER_NOT_CANONICAL', orderProblem);

    const digest = rosterDigest(signed.matchId, signed.serverId, entries);
    if (!timingSafeEqual(digest, Buffer.from(signed.digest, 'hex'))) {
      return reject('ROSTER_DIGEST_MISMATCH', 'roster entries do not match the manifest digest');
    }
    for (const [index, entry] of entries.entries()) {
      const entryRejection = entryMismatch(entry, index, signed);
      if (entryRejection !== undefined) return entryRejection;
    }
    return { ok: true, manifest: signed };
  }

  verifyRosterOrThrow(
    manifest: unknown,
    entries: readonly RosterEntry[],
    expect: RosterExpectation,
  ): RosterManifest {
    const result = this.verifyRoster(manifest, entries, expect);
    if (!result.ok) throw new JoinAuthRejectedError(result.reason, result.message);
    return result.manifest;
  }

  /**
   * The MAC under the named key; on failure, whether another held key produced it, either over
   * these bytes (signed under one key, labelled with another) or over the bytes relabelled with
   * that key's id (key id swapped after signing). Only failures pay for the extra MACs.
   */
  private checkMac(
    keyId: string,
    bytes: Buffer,
    mac: Buffer,
    relabel: (keyId: string) => Buffer,
  ): KeyCheck {
    if (this.keys.macMatches(keyId, bytes, mac)) return { ok: true };
    const signer = this.keys
      .ids()
      .find(
        (held) =>
          held !== keyId &&
          (this.keys.macMatches(held, bytes, mac) ||
            this.keys.macMatches(held, relabel(held), mac)),
      );
    if (signer !== undefined) {
      return reject(
        'KEY_MISMATCH',
        `names key ${JSON.stringify(keyId)} but was signed with key ${JSON.stringify(signer)}`,
      );
    }
    if (!this.keys.has(keyId)) {
      return reject('UNKNOWN_KEY', `key id ${JSON.stringify(keyId)} is not a current key`);
    }
    return reject('BAD_SIGNATURE', `MAC does not match under key ${JSON.stringify(keyId)}`);
  }

  private checkBinding(
    signed: { readonly serverId: string; readonly matchId: string; readonly issuedAt: number },
    expect: JoinTokenExpectation,
  ): Rejection<'WRONG_SERVER' | 'WRONG_MATCH' | 'NOT_YET_VALID'> | undefined {
    if (signed.serverId !== expect.serverId) {
      return reject(
        'WRONG_SERVER',
        `signed for server ${JSON.stringify(signed.serverId)}, not ${JSON.stringify(expect.serverId)}`,
      );
    }
    if (expect.matchId !== undefined && signed.matchId !== expect.matchId) {
      return reject('WRONG_MATCH', `signed for match ${signed.matchId}, not ${expect.matchId}`);
    }
    if (signed.issuedAt > expect.now + this.clockSkewMs) {
      return reject(
        'NOT_YET_VALID',
        `issued at ${signed.issuedAt}, more than ${this.clockSkewMs} ms after now (${expect.now})`,
      );
    }
    return undefined;
  }
}

// NaN or a missing server id would make every comparison false and wave tokens through.
function assertExpectation(expect: JoinTokenExpectation): void {
  if (!isServerId(expect.serverId)) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_EXPECTATION,
      'expect.serverId must be the verifying server id',
    );
  }
  if (expect.matchId !== undefined && !isCanonicalUuid(expect.matchId)) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_EXPECTATION,
      'expect.matchId must be a canonical lowercase uuid',
    );
  }
  if (!isInstant(expect.now)) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_EXPECTATION,
      'expect.now must be a non-negative integer of epoch ms',
    );
  }
}

function entryMismatch(
  entry: RosterEntry,
  index: number,
  manifest: RosterManifest,
): Rejection<'ROSTER_ENTRY_MISMATCH'> | undefined {
  const parts = splitJoinToken(entry.token);
  let claims: JoinClaims | undefined;
  try {
    claims = parts === undefined ? undefined : decodeJoinClaims(parts.claimBytes);
  } catch (error) {
    if (!(error instanceof JoinAuthError)) throw error;
  }
  if (claims === undefined) {
    return reject('ROSTER_ENTRY_MISMATCH', `entry ${index}: token is malformed`);
  }
  if (
    claims.playerId !== entry.playerId ||
    claims.matchId !== manifest.matchId ||
    claims.serverId !== manifest.serverId
  ) {
    return reject(
      'ROSTER_ENTRY_MISMATCH',
      `entry ${index}: token is not for this player, match and server`,
    );
  }
  return undefined;
}
