import { MAC_BYTES } from './key-set';
import { decodeBase64Url } from './length-prefixed.codec';

/**
 * Far above the longest valid token (673 claim bytes -> 898 + 1 + 43 characters), so oversized
 * input is refused before any decoding work.
 */
export const JOIN_TOKEN_MAX_LENGTH = 1024;

/** `base64url(claimBytes) "." base64url(mac)`, both unpadded. */
export function formatJoinToken(claimBytes: Uint8Array, mac: Uint8Array): string {
  return `${Buffer.from(claimBytes).toString('base64url')}.${Buffer.from(mac).toString('base64url')}`;
}

/** The two parts of a token, or undefined when it is not shaped like one. Nothing is verified. */
export function splitJoinToken(token: unknown): { claimBytes: Buffer; mac: Buffer } | undefined {
  if (typeof token !== 'string' || token.length > JOIN_TOKEN_MAX_LENGTH) return undefined;
  const parts = token.split('.');
  if (parts.length !== 2) return undefined;
  const claimBytes = decodeBase64Url(parts[0] ?? '');
  const mac = decodeBase64Url(parts[1] ?? '');
  if (claimBytes === undefined || mac === undefined || mac.length !== MAC_BYTES) return undefined;
  return { claimBytes, mac };
}
