import { dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { scratchKeyFiles, testKey } from './join-auth.factories';
import { KeySet, RAW_KEY_ID } from './key-set';

const keyFile = scratchKeyFiles();

function errorOf(fn: () => unknown): JoinAuthError {
  try {
    fn();
  } catch (error) {
    if (error instanceof JoinAuthError) return error;
    throw error;
  }
  throw new Error('expected a JoinAuthError');
}

const b64 = (key: Buffer) => key.toString('base64');
const payload = Buffer.from('claim bytes');

describe(KeySet.name, () => {
  describe('loadFile', () => {
    it('reads a JSON map of key id to base64 key', () => {
      const path = keyFile(
        JSON.stringify({ 'mp-2026-01': b64(testKey('a')), 'mp-2026-07': b64(testKey('b')) }),
      );
      const keys = KeySet.loadFile(path);
      expect(keys.ids()).toEqual(['mp-2026-01', 'mp-2026-07']);
      expect(keys.mac('mp-2026-01', payload)).toEqual(
        KeySet.fromRawKey(testKey('a')).mac('', payload),
      );
    });

    it('accepts a pretty-printed map with surrounding whitespace', () => {
      const path = keyFile(`\n  ${JSON.stringify({ k1: b64(testKey('a')) }, null, 2)}\n`);
      expect(KeySet.loadFile(path).ids()).toEqual(['k1']);
    });

    it('takes any other file as the raw bytes of one key with id ""', () => {
      const raw = Buffer.concat([Buffer.of(0x7b), testKey('raw')]); // starts like "{" but is not text
      const keys = KeySet.loadFile(keyFile(raw));
      expect(keys.ids()).toEqual([RAW_KEY_ID]);
      expect(keys.mac('', payload)).toEqual(KeySet.fromRawKey(raw).mac('', payload));
    });

    it('keeps a raw key file byte for byte, trailing newline included', () => {
      const text = `${b64(testKey('raw'))}\n`;
      const keys = KeySet.loadFile(keyFile(text));
      expect(keys.mac('', payload)).toEqual(KeySet.fromRawKey(Buffer.from(text)).mac('', payload));
      expect(keys.mac('', payload)).not.toEqual(
        KeySet.fromRawKey(Buffer.from(text.trim())).mac('', payload),
      );
    });

    it('treats JSON that is not an object as raw key bytes', () => {
      const text = JSON.stringify([b64(testKey('a'))]);
      expect(KeySet.loadFile(keyFile(text)).ids()).toEqual(['']);
    });

    it('refuses a missing file with KEY_FILE_UNREADABLE naming the path', () => {
      const path = join(dirname(keyFile('')), 'missing');
      const error = errorOf(() => KeySet.loadFile(path));
      expect(error.code).toBe(JoinAuthErrorCode.KEY_FILE_UNREADABLE);
      expect(error.message).toBe(`key file ${path}: cannot be read (ENOENT)`);
    });

    it.each<[string, string | Buffer, RegExp]>([
      ['an empty file', '', /is 0 bytes; at least 32 are required/],
      ['a raw key of 31 bytes', testKey('a').subarray(0, 31), /is 31 bytes; at least 32/],
      ['an empty map', '{}', /holds no keys/],
      [
        'a map key of 16 bytes',
        JSON.stringify({ k1: b64(testKey('a').subarray(0, 16)) }),
        /"k1" is 16 bytes/,
      ],
      [
        'a map key that is not base64',
        JSON.stringify({ k1: 'not base64!' }),
        /"k1" must be a string of standard padded base64/,
      ],
      [
        'a map key in base64url',
        JSON.stringify({ k1: testKey('a').toString('base64url') }),
        /"k1" must be a string of standard padded base64/,
      ],
      ['a map key that is a number', JSON.stringify({ k1: 42 }), /"k1" must be a string/],
      [
        'the empty key id in a map',
        JSON.stringify({ '': b64(testKey('a')) }),
        /key id "" must be 1-64 visible ASCII/,
      ],
      [
        'a key id with a space',
        JSON.stringify({ 'k 1': b64(testKey('a')) }),
        /key id "k 1" must be/,
      ],
      [
        'a key id of 65 characters',
        JSON.stringify({ ['k'.repeat(65)]: b64(testKey('a')) }),
        /must be 1-64/,
      ],
      [
        'a map with a trailing comma',
        `{"k1": "${b64(testKey('a'))}",}`,
        /looks like a JSON key map but does not parse/,
      ],
    ])('refuses %s with INVALID_KEY_SET', (_name, contents, message) => {
      const path = keyFile(contents);
      const error = errorOf(() => KeySet.loadFile(path));
      expect(error.code).toBe(JoinAuthErrorCode.INVALID_KEY_SET);
      expect(error.message).toMatch(message);
      expect(error.message).toContain(path);
    });

    it('never puts key material in an error', () => {
      const short = b64(testKey('secret').subarray(0, 20));
      const error = errorOf(() => KeySet.loadFile(keyFile(JSON.stringify({ k1: short }))));
      expect(error.message).not.toContain(short);
      expect(JSON.stringify(error.details)).not.toContain(short);
    });
  });

  it('prints and serialises as its key ids only', () => {
    const key = testKey('a');
    const keys = KeySet.fromKeys({ k1: key });
    expect(inspect(keys)).toBe('KeySet { keyIds: ["k1"] }');
    expect(JSON.stringify({ keys })).toBe('{"keys":{"keyIds":["k1"]}}');
    expect(inspect(keys)).not.toContain(key.toString('hex'));
  });

  it('copies key bytes so later changes to the caller buffer do not reach it', () => {
    const key = Buffer.from(testKey('a'));
    const keys = KeySet.fromKeys(new Map([['k1', key]]));
    const before = keys.mac('k1', payload);
    key.fill(0);
    expect(keys.mac('k1', payload)).toEqual(before);
  });

  it('checks MACs in constant time and only for keys it holds', () => {
    const keys = KeySet.fromKeys({ k1: testKey('a') });
    const mac = keys.mac('k1', payload);
    expect(mac).toHaveLength(32);
    expect(keys.macMatches('k1', payload, mac!)).toBe(true);
    expect(keys.macMatches('k1', payload, mac!.subarray(0, 31))).toBe(false);
    expect(keys.macMatches('k2', payload, mac!)).toBe(false);
    expect(keys.mac('k2', payload)).toBeUndefined();
  });

  it('unites sets, refusing one id with two different keys', () => {
    const a = KeySet.fromKeys({ k1: testKey('a') });
    const raw = KeySet.fromRawKey(testKey('raw'));
    expect(KeySet.union(a, raw, a).ids()).toEqual(['k1', '']);
    const clash = KeySet.fromKeys({ k1: testKey('b') });
    expect(() => KeySet.union(a, clash)).toThrow(/"k1" names two different keys/);
  });

  it('retires keys with without(), refusing to become empty', () => {
    const keys = KeySet.fromKeys({ k1: testKey('a'), k2: testKey('b') });
    expect(keys.without('k1').ids()).toEqual(['k2']);
    expect(keys.ids()).toEqual(['k1', 'k2']);
    expect(errorOf(() => keys.without('k1', 'k2')).code).toBe(JoinAuthErrorCode.INVALID_KEY_SET);
  });
});
