import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { isKeyId, isNamedKeyId } from './join-claims.codec';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { decodeBase64 } from './length-prefixed.codec';

/** A shorter key would give HMAC-SHA256 less strength than its 256-bit output. */
export const MIN_KEY_BYTES = 32;
export const MAC_BYTES = 32;

/** The id of the single key a raw key file holds. */
export const RAW_KEY_ID = '';

const JSON_OBJECT_TEXT = /^\s*\{[\s\S]*\}\s*$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The HMAC keys a signer or verifier holds, by key id. The key bytes never leave the set: it
 * computes and checks MACs itself, and prints as its key ids only, so a logged config or a
 * thrown error can never carry key material.
 */
export class KeySet {
  private readonly keys: ReadonlyMap<string, Buffer>;
  /** The same keys imported once: an HMAC under a KeyObject skips importing the key each call. */
  private readonly macKeys: ReadonlyMap<string, KeyObject>;

  private constructor(keys: Map<string, Buffer>, source: string) {
    if (keys.size === 0) {
      throw new JoinAuthError(JoinAuthErrorCode.INVALID_KEY_SET, `${source}: holds no keys`);
    }
    for (const [keyId, key] of keys) {
      if (!isKeyId(keyId)) {
        throw new JoinAuthError(
          JoinAuthErrorCode.INVALID_KEY_SET,
          `${source}: key id ${JSON.stringify(keyId)} must be 1-64 visible ASCII characters`,
        );
      }
      if (key.length < MIN_KEY_BYTES) {
        throw new JoinAuthError(
          JoinAuthErrorCode.INVALID_KEY_SET,
          `${source}: key ${JSON.stringify(keyId)} is ${key.length} bytes; at least ${MIN_KEY_BYTES} are required`,
          { keyId },
        );
      }
    }
    this.keys = keys;
    this.macKeys = new Map([...keys].map(([keyId, key]) => [keyId, createSecretKey(key)]));
  }

  /** Keys by id from memory; bytes are copied so later changes to the caller's buffers do not leak in. */
  static fromKeys(
    keys: ReadonlyMap<string, Uint8Array> | Readonly<Record<string, Uint8Array>>,
  ): KeySet {
    const entries =
      keys instanceof Map
        ? [...(keys as ReadonlyMap<string, Uint8Array>).entries()]
        : Object.entries(keys as Readonly<Record<string, Uint8Array>>);
    return new KeySet(new Map(entries.map(([id, key]) => [id, Buffer.from(key)])), 'key set');
  }

  /** The `{keyId: base64Key}` map a key file holds, already parsed. */
  static fromBase64Map(map: Readonly<Record<string, unknown>>, source = 'key map'): KeySet {
    const keys = new Map<string, Buffer>();
    for (const [keyId, value] of Object.entries(map)) {
      if (!isNamedKeyId(keyId)) {
        throw new JoinAuthError(
          JoinAuthErrorCode.INVALID_KEY_SET,
          `${source}: key id ${JSON.stringify(keyId)} must be 1-64 visible ASCII characters`,
        );
      }
      const key = typeof value === 'string' ? decodeBase64(value) : undefined;
      if (key === undefined) {
        throw new JoinAuthError(
          JoinAuthErrorCode.INVALID_KEY_SET,
          `${source}: key ${JSON.stringify(keyId)} must be a string of standard padded base64`,
          { keyId },
        );
      }
      keys.set(keyId, key);
    }
    return new KeySet(keys, source);
  }

  /** One key with id "", as a raw key file holds it. */
  static fromRawKey(key: Uint8Array, source = 'raw key'): KeySet {
    return new KeySet(new Map([[RAW_KEY_ID, Buffer.from(key)]]), source);
  }

  /**
   * A key file's contents: a JSON object is a `{keyId: base64Key}` map; anything else is the raw
   * bytes of one key with id "", taken exactly (a trailing newline is part of the key).
   * UTF-8 text shaped like an object ("{ ... }") must parse as one: a map with a typo must not
   * silently become one raw key named "".
   */
  static parse(contents: Uint8Array, source = 'key file'): KeySet {
    let text: string | undefined;
    try {
      text = strictUtf8.decode(contents);
    } catch {
      text = undefined;
    }
    if (text === undefined || !JSON_OBJECT_TEXT.test(text)) {
      return KeySet.fromRawKey(contents, source);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new JoinAuthError(
        JoinAuthErrorCode.INVALID_KEY_SET,
        `${source}: looks like a JSON key map but does not parse (${(error as Error).message})`,
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return KeySet.fromRawKey(contents, source);
    }
    return KeySet.fromBase64Map(parsed as Record<string, unknown>, source);
  }

  /** Reads and parses a key file (a mounted Secret, typically) once, at start-up. */
  static loadFile(path: string): KeySet {
    let contents: Buffer;
    try {
      contents = readFileSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new JoinAuthError(
        JoinAuthErrorCode.KEY_FILE_UNREADABLE,
        `key file ${path}: cannot be read (${code})`,
        { path, cause: code },
      );
    }
    return KeySet.parse(contents, `key file ${path}`);
  }

  /**
   * Every key of every set, e.g. a verifier reading a legacy raw key file beside a key map during
   * rotation. One id with two different keys is refused rather than resolved by order.
   */
  static union(...sets: readonly KeySet[]): KeySet {
    const keys = new Map<string, Buffer>();
    for (const set of sets) {
      for (const [keyId, key] of set.keys) {
        const held = keys.get(keyId);
        if (held !== undefined && !held.equals(key)) {
          throw new JoinAuthError(
            JoinAuthErrorCode.INVALID_KEY_SET,
            `key set union: key id ${JSON.stringify(keyId)} names two different keys`,
            { keyId },
          );
        }
        keys.set(keyId, key);
      }
    }
    return new KeySet(keys, 'key set union');
  }

  get size(): number {
    return this.keys.size;
  }

  ids(): string[] {
    return [...this.keys.keys()];
  }

  has(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** The set minus the given key ids: how a verifier retires a key. */
  without(...keyIds: readonly string[]): KeySet {
    const keys = new Map(this.keys);
    for (const keyId of keyIds) keys.delete(keyId);
    return new KeySet(keys, 'key set');
  }

  /** HMAC-SHA256 of the bytes under the named key; undefined when the set does not hold it. */
  mac(keyId: string, bytes: Uint8Array): Buffer | undefined {
    const key = this.macKeys.get(keyId);
    return key === undefined ? undefined : createHmac('sha256', key).update(bytes).digest();
  }

  /** Constant-time check of a MAC; false for a key the set does not hold. */
  macMatches(keyId: string, bytes: Uint8Array, mac: Uint8Array): boolean {
    const expected = this.mac(keyId, bytes);
    return (
      expected !== undefined && mac.length === expected.length && timingSafeEqual(expected, mac)
    );
  }

  toJSON(): { keyIds: string[] } {
    return { keyIds: this.ids() };
  }

  [inspect.custom](): string {
    return `KeySet { keyIds: ${JSON.stringify(this.ids())} }`;
  }
}
