import { createHash, randomBytes } from 'node:crypto';

export interface WorkloadCredential {
  /** Handed to the server once; never stored or logged. */
  readonly secret: string;
  /** SHA-256 of the secret: what allocations.credential_hash holds. */
  readonly hash: Buffer;
}

/** A fresh random 256-bit credential. */
export function newWorkloadCredential(): WorkloadCredential {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashWorkloadCredential(secret) };
}

/**
 * A plain SHA-256 suffices (no salt or stretching): the secret is 256 random bits, so the hash
 * cannot be brute-forced, and an unsalted digest can be looked up by index.
 */
export function hashWorkloadCredential(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}
