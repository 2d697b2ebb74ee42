import { createHash, randomBytes } from 'node:crypto';

/** Session tokens and device secrets: 256 random bits, base64url, with a prefix that says which. */
export const SESSION_TOKEN_PREFIX = 'mps_';
export const DEVICE_SECRET_PREFIX = 'mpd_';
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** Whether `value` has the shape of a secret we issued with `prefix` (cheap pre-check before a lookup). */
export function isSecretShape(value: string, prefix: string): boolean {
  return value.startsWith(prefix) && SECRET_PATTERN.test(value.slice(prefix.length));
}

/** Only this hash is stored: a leaked table cannot be replayed as tokens. */
export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
