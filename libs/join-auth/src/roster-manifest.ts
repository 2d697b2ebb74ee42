import { createHash } from 'node:crypto';
import { isCanonicalUuid, isInstant, isKeyId, isServerId } from './join-claims.codec';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { JoinAuthFormat } from './join-auth.formats';
import { ByteWriter, isWellFormedString, LayoutError, UINT32_MAX } from './length-prefixed.codec';

/** One participant of a published roster: the player and the join token signed for them. */
export interface RosterEntry {
  readonly playerId: string;
  readonly token: string;
}

/**
 * What the allocator commits to when it publishes a roster. The digest covers every entry in
 * canonical order and the count, so a roster missing an entry, with an extra one, reordered or
 * altered no longer matches, even when every remaining token is individually valid.
 */
export interface RosterManifest {
  readonly matchId: string;
  readonly serverId: string;
  readonly keyId: string;
  /** SHA-256 of the roster digest input (docs/JOIN-AUTH.md), lowercase hex. */
  readonly digest: string;
  readonly entryCount: number;
  /** Unix epoch milliseconds. */
  readonly issuedAt: number;
  /**
   * Which roster of the match this is: absent or 1 for the roster the match was allocated with
   * (signed as version 1 bytes, unchanged), 2 and up for each revision a backfill published
   * (version 2 bytes, which sign the revision), so an older roster is never taken for a newer.
   */
  readonly revision?: number;
}

/** The roster revision a manifest signs (absent: the first). */
export function manifestRevision(manifest: Pick<RosterManifest, 'revision'>): number {
  return manifest.revision ?? 1;
}

/** A manifest with its HMAC-SHA256 over the manifest bytes, unpadded base64url. */
export interface SignedRosterManifest extends RosterManifest {
  readonly signature: string;
}

export const ROSTER_DIGEST_BYTES = 32;
const DIGEST_HEX = /^[0-9a-f]{64}$/;

/** Canonical roster order: ascending by playerId, which for lowercase uuids is byte order. */
export function compareRosterEntries(a: RosterEntry, b: RosterEntry): number {
  return a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;
}

/** The entries in canonical order, for the publisher; a duplicate player is refused. */
export function canonicalRosterOrder(entries: readonly RosterEntry[]): RosterEntry[] {
  const sorted = [...entries].sort(compareRosterEntries);
  assertRosterEntries(sorted);
  return sorted;
}

/** The first problem with one entry on its own, or undefined when it can be encoded. */
export function rosterEntryProblem(entry: unknown, index: number): string | undefined {
  if (typeof entry !== 'object' || entry === null) return `entry ${index} must be an object`;
  const e = entry as Record<string, unknown>;
  if (!isCanonicalUuid(e.playerId)) {
    return `entry ${index}: playerId must be a canonical lowercase uuid`;
  }
  if (typeof e.token !== 'string' || e.token === '' || !isWellFormedString(e.token)) {
    return `entry ${index}: token must be a non-empty string`;
  }
  return undefined;
}

/** The first entry out of canonical order (or a repeat), or undefined when there is none. */
export function rosterOrderProblem(entries: readonly RosterEntry[]): string | undefined {
  for (let index = 1; index < entries.length; index++) {
    const previous = entries[index - 1];
    const entry = entries[index];
    if (
      previous !== undefined &&
      entry !== undefined &&
      compareRosterEntries(previous, entry) >= 0
    ) {
      return `entry ${index}: entries must be in ascending playerId order without duplicates`;
    }
  }
  return undefined;
}

/** The first problem with the entries as a roster, or undefined when they are one. */
export function rosterEntriesProblem(entries: readonly RosterEntry[]): string | undefined {
  if (entries.length === 0) return 'a roster has at least one entry';
  if (entries.length > UINT32_MAX) return 'a roster has at most 2^32 - 1 entries';
  for (const [index, entry] of entries.entries()) {
    const problem = rosterEntryProblem(entry, index);
    if (problem !== undefined) return problem;
  }
  return rosterOrderProblem(entries);
}

function assertRosterEntries(entries: readonly RosterEntry[]): void {
  const problem = rosterEntriesProblem(entries);
  if (problem !== undefined) {
    throw new JoinAuthError(JoinAuthErrorCode.INVALID_ROSTER, `invalid roster: ${problem}`);
  }
}

function assertRosterBinding(matchId: string, serverId: string): void {
  if (!isCanonicalUuid(matchId)) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_ROSTER,
      'invalid roster: matchId must be a canonical lowercase uuid',
    );
  }
  if (!isServerId(serverId)) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_ROSTER,
      'invalid roster: serverId must be 1-255 UTF-8 bytes without control characters',
    );
  }
}

/**
 * The bytes the roster digest hashes: format tag 0x02, matchId, serverId (uint16-prefixed
 * UTF-8), entry count (uint32), then each entry's playerId and token (uint16-prefixed UTF-8),
 * in the order given, which must be canonical.
 */
export function encodeRosterDigestInput(
  matchId: string,
  serverId: string,
  entries: readonly RosterEntry[],
): Buffer {
  assertRosterBinding(matchId, serverId);
  assertRosterEntries(entries);
  const writer = new ByteWriter()
    .u8(JoinAuthFormat.ROSTER_DIGEST_V1)
    .str16(matchId)
    .str16(serverId)
    .u32(entries.length);
  try {
    for (const entry of entries) writer.str16(entry.playerId).str16(entry.token);
  } catch (error) {
    if (error instanceof LayoutError) {
      throw new JoinAuthError(JoinAuthErrorCode.INVALID_ROSTER, `invalid roster: ${error.message}`);
    }
    throw error;
  }
  return writer.toBuffer();
}

/** SHA-256 of encodeRosterDigestInput(...), 32 bytes. */
export function rosterDigest(
  matchId: string,
  serverId: string,
  entries: readonly RosterEntry[],
): Buffer {
  return createHash('sha256')
    .update(encodeRosterDigestInput(matchId, serverId, entries))
    .digest();
}

/** The first problem with a manifest (as read from JSON), or undefined when it can be encoded. */
export function rosterManifestProblem(manifest: unknown): string | undefined {
  if (typeof manifest !== 'object' || manifest === null) return 'manifest must be an object';
  const m = manifest as Record<string, unknown>;
  if (!isCanonicalUuid(m.matchId)) return 'matchId must be a canonical lowercase uuid';
  if (!isServerId(m.serverId)) {
    return 'serverId must be 1-255 UTF-8 bytes without control characters';
  }
  if (!isKeyId(m.keyId)) return 'keyId must be "" or 1-64 visible ASCII characters';
  if (typeof m.digest !== 'string' || !DIGEST_HEX.test(m.digest)) {
    return 'digest must be 64 lowercase hex digits';
  }
  if (
    typeof m.entryCount !== 'number' ||
    !Number.isSafeInteger(m.entryCount) ||
    m.entryCount < 1 ||
    m.entryCount > UINT32_MAX
  ) {
    return 'entryCount must be an integer from 1 to 2^32 - 1';
  }
  if (!isInstant(m.issuedAt)) return 'issuedAt must be a non-negative integer of epoch ms';
  if (
    m.revision !== undefined &&
    (typeof m.revision !== 'number' ||
      !Number.isSafeInteger(m.revision) ||
      m.revision < 1 ||
      m.revision > UINT32_MAX)
  ) {
    return 'revision must be an integer from 1 to 2^32 - 1';
  }
  return undefined;
}

/**
 * The manifest bytes the signature covers: format tag 0x03, keyId, matchId, serverId
 * (uint16-prefixed UTF-8), the digest (32 raw bytes), entryCount (uint32), issuedAt (uint64
 * epoch ms), all big-endian. A revision above 1 is signed as tag 0x04 with the same fields and
 * the revision (uint32) last; revision 1 keeps the version 1 bytes, so rosters signed before
 * backfill existed still verify.
 */
export function encodeRosterManifest(manifest: RosterManifest): Buffer {
  const problem = rosterManifestProblem(manifest);
  if (problem !== undefined) {
    throw new JoinAuthError(
      JoinAuthErrorCode.INVALID_ROSTER,
      `invalid roster manifest: ${problem}`,
    );
  }
  const revision = manifestRevision(manifest);
  const writer = new ByteWriter()
    .u8(revision === 1 ? JoinAuthFormat.ROSTER_MANIFEST_V1 : JoinAuthFormat.ROSTER_MANIFEST_V2)
    .str16(manifest.keyId)
    .str16(manifest.matchId)
    .str16(manifest.serverId)
    .fixed(Buffer.from(manifest.digest, 'hex'))
    .u32(manifest.entryCount)
    .u64(manifest.issuedAt);
  return (revision === 1 ? writer : writer.u32(revision)).toBuffer();
}
