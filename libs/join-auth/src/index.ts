export * from './join-auth.error';
export * from './join-auth.formats';
export {
  assertJoinClaims,
  decodeJoinClaims,
  encodeJoinClaims,
  ENDPOINT_MAX_BYTES,
  isCanonicalUuid,
  isKeyId,
  isNamedKeyId,
  joinClaimsProblem,
  KEY_ID_MAX_LENGTH,
  SERVER_ID_MAX_BYTES,
  type JoinClaims,
  type UnsignedJoinClaims,
} from './join-claims.codec';
export { JOIN_TOKEN_MAX_LENGTH } from './join-token.codec';
export { loadKeyFile, loadSigningKeys, type ConfiguredKeyFile, type SigningKeys } from './key-file';
export { KeySet, MAC_BYTES, MIN_KEY_BYTES, RAW_KEY_ID } from './key-set';
export {
  canonicalRosterOrder,
  compareRosterEntries,
  encodeRosterDigestInput,
  encodeRosterManifest,
  manifestRevision,
  ROSTER_DIGEST_BYTES,
  rosterDigest,
  type RosterEntry,
  type RosterManifest,
  type SignedRosterManifest,
} from './roster-manifest';
export {
  JoinTokenSigner,
  type IssuedJoinToken,
  type JoinSeat,
  type RosterToSign,
} from './join-token.signer';
export * from './join-token.verifier';
export * from './probe-signing';
