import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { JoinAuthFormat } from './join-auth.formats';
import {
  ByteReader,
  ByteWriter,
  isWellFormedString,
  LayoutError,
  utf8Length,
} from './length-prefixed.codec';

/**
 * What a join token authorises: this player may join this match on this server at this endpoint,
 * from issuedAt until expiresAt (unix epoch milliseconds, expiresAt exclusive).
 */
export interface JoinClaims {
  /** Id of the key that signed the claims; "" for a key loaded from a raw key file. */
  readonly keyId: string;
  readonly matchId: string;
  readonly playerId: string;
  readonly serverId: string;
  /** Where the player connects, e.g. "10.0.3.7:7777"; opaque to join-auth. */
  readonly endpoint: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** Claims before signing: the signer sets keyId to its active key. */
export type UnsignedJoinClaims = Omit<JoinClaims, 'keyId'>;

export const KEY_ID_MAX_LENGTH = 64;
/** UTF-8 bytes; far below the uint16 prefix limit so tokens stay small enough for a URL. */
export const SERVER_ID_MAX_BYTES = 255;
export const ENDPOINT_MAX_BYTES = 255;

// Visible ASCII only: key ids end up in Secret keys, logs and other languages' maps.
const KEY_ID = /^[\x21-\x7e]{1,64}$/;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A key id as a key map may hold it: 1-64 visible ASCII characters. */
export function isNamedKeyId(value: unknown): value is string {
  return typeof value === 'string' && KEY_ID.test(value);
}

/** A key id as claims may carry it: a named key id, or "" (the raw-file key). */
export function isKeyId(value: unknown): value is string {
  return value === '' || isNamedKeyId(value);
}

/**
 * Canonical lowercase uuid other than nil, as PostgreSQL prints one: ids are compared as bytes,
 * so 'A1...' and 'a1...' must never both verify.
 */
export function isCanonicalUuid(value: unknown): value is string {
  return typeof value === 'string' && CANONICAL_UUID.test(value) && value !== NIL_UUID;
}

function isBoundedText(value: unknown, maxBytes: number): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    isWellFormedString(value) &&
    !CONTROL_CHARACTER.test(value) &&
    utf8Length(value) <= maxBytes
  );
}

/** A server id as claims and manifests carry it: 1-255 UTF-8 bytes, no control characters. */
export function isServerId(value: unknown): value is string {
  return isBoundedText(value, SERVER_ID_MAX_BYTES);
}

/** Unix epoch milliseconds: a non-negative safe integer, so uint64 round-trips it exactly. */
export function isInstant(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The first problem with the claims, or undefined when they can be encoded. */
export function joinClaimsProblem(claims: unknown): string | undefined {
  if (typeof claims !== 'object' || claims === null) return 'claims must be an object';
  const c = claims as Record<string, unknown>;
  if (!isKeyId(c.keyId)) return 'keyId must be "" or 1-64 visible ASCII characters';
  if (!isCanonicalUuid(c.matchId)) return 'matchId must be a canonical lowercase uuid';
  if (!isCanonicalUuid(c.playerId)) return 'playerId must be a canonical lowercase uuid';
  if (!isServerId(c.serverId)) {
    return `serverId must be 1-${SERVER_ID_MAX_BYTES} UTF-8 bytes without control characters`;
  }
  if (!isBoundedText(c.endpoint, ENDPOINT_MAX_BYTES)) {
    return `endpoint must be 1-${ENDPOINT_MAX_BYTES} UTF-8 bytes without control characters`;
  }
  if (!isInstant(c.issuedAt)) return 'issuedAt must be a non-negative integer of epoch ms';
  if (!isInstant(c.expiresAt)) return 'expiresAt must be a non-negative integer of epoch ms';
  if (c.expiresAt <= c.issuedAt) return 'expiresAt must be after issuedAt';
  return undefined;
}

export function assertJoinClaims(claims: unknown): asserts claims is JoinClaims {
  const problem = joinClaimsProblem(claims);
  if (problem !== undefined) {
    throw new JoinAuthError(JoinAuthErrorCode.INVALID_CLAIMS, `invalid join claims: ${problem}`);
  }
}

/**
 * The canonical claim bytes (docs/JOIN-AUTH.md "Claim bytes"): format tag 0x01, then keyId,
 * matchId, playerId, serverId, endpoint as uint16-length-prefixed UTF-8, then issuedAt and
 * expiresAt as uint64 big-endian epoch ms. These exact bytes are what the MAC covers.
 */
export function encodeJoinClaims(claims: JoinClaims): Buffer {
  assertJoinClaims(claims);
  return new ByteWriter()
    .u8(JoinAuthFormat.JOIN_CLAIMS_V1)
    .str16(claims.keyId)
    .str16(claims.matchId)
    .str16(claims.playerId)
    .str16(claims.serverId)
    .str16(claims.endpoint)
    .u64(claims.issuedAt)
    .u64(claims.expiresAt)
    .toBuffer();
}

/**
 * The inverse of encodeJoinClaims, strictly: a wrong format tag, a truncated field, trailing
 * bytes or values encodeJoinClaims would refuse are all MALFORMED_BYTES.
 */
export function decodeJoinClaims(bytes: Uint8Array): JoinClaims {
  let claims: JoinClaims;
  try {
    const reader = new ByteReader(bytes);
    const format = reader.u8('format');
    if (format !== JoinAuthFormat.JOIN_CLAIMS_V1) {
      throw new LayoutError(
        `format 0x${format.toString(16).padStart(2, '0')} is not join claims v1`,
      );
    }
    claims = {
      keyId: reader.str16('keyId'),
      matchId: reader.str16('matchId'),
      playerId: reader.str16('playerId'),
      serverId: reader.str16('serverId'),
      endpoint: reader.str16('endpoint'),
      issuedAt: reader.u64('issuedAt'),
      expiresAt: reader.u64('expiresAt'),
    };
    reader.end();
  } catch (error) {
    if (error instanceof LayoutError) {
      throw new JoinAuthError(
        JoinAuthErrorCode.MALFORMED_BYTES,
        `malformed claim bytes: ${error.message}`,
      );
    }
    throw error;
  }
  const problem = joinClaimsProblem(claims);
  if (problem !== undefined) {
    throw new JoinAuthError(JoinAuthErrorCode.MALFORMED_BYTES, `malformed claim bytes: ${problem}`);
  }
  return claims;
}
