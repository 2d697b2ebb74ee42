/**
 * Stable codes of join-auth failures that are the caller's fault (bad claims, bad key material).
 * Callers switch on these, never on messages; add codes, never repurpose one. A token or roster
 * that fails verification is not an error of this kind: verify() returns its rejection reason.
 */
export const JoinAuthErrorCode = {
  /** Claims that can never be encoded (bad uuid, empty server id, expiry not after issue, ...). */
  INVALID_CLAIMS: 'INVALID_CLAIMS',
  /** Bytes that are not the canonical encoding of any claims or manifest. */
  MALFORMED_BYTES: 'MALFORMED_BYTES',
  /** Key material that is unusable (short key, bad key id, bad base64, empty set, ...). */
  INVALID_KEY_SET: 'INVALID_KEY_SET',
  /** The key file could not be read at all. */
  KEY_FILE_UNREADABLE: 'KEY_FILE_UNREADABLE',
  /** A signer was given an active key id its key set does not hold. */
  UNKNOWN_ACTIVE_KEY: 'UNKNOWN_ACTIVE_KEY',
  /** A roster that cannot be signed (empty, not in canonical order, duplicate player, ...). */
  INVALID_ROSTER: 'INVALID_ROSTER',
  /** A verifier was called with an unusable expectation (no server id, now not epoch ms, ...). */
  INVALID_EXPECTATION: 'INVALID_EXPECTATION',
  /** verifyOrThrow() / verifyRosterOrThrow() rejected its input; see the error's reason. */
  REJECTED: 'REJECTED',
} as const;
export type JoinAuthErrorCode = (typeof JoinAuthErrorCode)[keyof typeof JoinAuthErrorCode];

export class JoinAuthError extends Error {
  override name = 'JoinAuthError';

  constructor(
    readonly code: JoinAuthErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}
