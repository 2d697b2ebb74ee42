import { encodeJoinClaims, type UnsignedJoinClaims } from './join-claims.codec';
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
