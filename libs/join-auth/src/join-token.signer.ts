import { encodeJoinClaims, type JoinClaims, type UnsignedJoinClaims } from './join-claims.codec';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { formatJoinToken } from './join-token.codec';
import { type KeySet } from './key-set';
import {
  encodeRosterManifest,
  rosterDigest,
  type RosterEntry,
  type RosterManifest,
  type SignedRosterManifest,
} from './roster-manifest';

export interface RosterToSign {
  readonly matchId: string;
  readonly serverId: string;
  /** In canonical order (canonicalRosterOrder()); publish exactly these, in this order. */
  readonly entries: readonly RosterEntry[];
  /** Unix epoch milliseconds. */
  readonly issuedAt: number;
  /** The roster revision (RosterManifest.revision); absent for the match's first roster. */
  readonly revision?: number;
}

/** Signs join tokens and roster manifests with the active key of a key set (the allocator's side). */
/** Whose place on which server a join token grants. */
export type JoinSeat = Pick<JoinClaims, 'matchId' | 'playerId' | 'serverId' | 'endpoint'>;

/** A signed join token: the key it names and its validity, as the stores keep them. */
export interface IssuedJoinToken {
  readonly joinToken: string;
  readonly keyId: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

export class JoinTokenSigner {
  constructor(
    private readonly keys: KeySet,
    readonly activeKeyId: string,
  ) {
    if (!keys.has(activeKeyId)) {
      throw new JoinAuthError(
        JoinAuthErrorCode.UNKNOWN_ACTIVE_KEY,
        `active key id ${JSON.stringify(activeKeyId)} is not in the key set (it holds ${keys
          .ids()
          .map((id) => JSON.stringify(id))
          .join(', ')})`,
        { activeKeyId, keyIds: keys.ids() },
      );
    }
  }

  /** The ids of the keys this signer holds (never the key material): what verifiers accept. */
  heldKeyIds(): string[] {
    return this.keys.ids();
  }

  /** A join token for the claims, naming (and MAC'd under) the active key. */
  sign(claims: UnsignedJoinClaims): string {
    const claimBytes = encodeJoinClaims({ ...claims, keyId: this.activeKeyId });
    return formatJoinToken(claimBytes, this.macOf(claimBytes));
  }

  /**
   * A join token for `seat`, valid `ttlMs` from `issuedAt` (epoch ms), with what the stores record
   * of it beside the seat.
   */
  issue(seat: JoinSeat, issuedAt: number, ttlMs: number): IssuedJoinToken {
    const expiresAt = issuedAt + ttlMs;
    return {
      joinToken: this.sign({ ...seat, issuedAt, expiresAt }),
      keyId: this.activeKeyId,
      issuedAt: new Date(issuedAt),
      expiresAt: new Date(expiresAt),
    };
  }

  /** The manifest committing to the whole roster, signed under the active key. */
  signRoster(roster: RosterToSign): SignedRosterManifest {
    const manifest: RosterManifest = {
      matchId: roster.matchId,
      serverId: roster.serverId,
      keyId: this.activeKeyId,
      digest: rosterDigest(roster.matchId, roster.serverId, roster.entries).toString('hex'),
      entryCount: roster.entries.length,
      issuedAt: roster.issuedAt,
      ...(roster.revision === undefined ? {} : { revision: roster.revision }),
    };
    const signature = this.macOf(encodeRosterManifest(manifest)).toString('base64url');
    return { ...manifest, signature };
  }

  private macOf(bytes: Buffer): Buffer {
    const mac = this.keys.mac(this.activeKeyId, bytes);
    // The constructor checked the key is held and key sets are immutable.
    if (mac === undefined) throw new Error('active key vanished from an immutable key set');
    return mac;
  }
}
