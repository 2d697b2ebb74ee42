import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { decodeJoinClaims, encodeJoinClaims, type JoinClaims } from './join-claims.codec';
import { T0 } from './join-auth.factories';

const MATCH = '11111111-1111-4111-8111-111111111111';
const PLAYER = '22222222-2222-4222-8222-222222222222';

function claims(overrides: Partial<JoinClaims> = {}): JoinClaims {
  return {
    keyId: 'k',
    matchId: MATCH,
    playerId: PLAYER,
    serverId: 's',
    endpoint: 'e:1',
    issuedAt: 1,
    expiresAt: 0x0102,
    ...overrides,
  };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof JoinAuthError) return error.code;
    throw error;
  }
  throw new Error('expected a JoinAuthError');
}

describe(encodeJoinClaims.name, () => {
  it('lays the claims out as documented: tag, five uint16-prefixed strings, two uint64 times', () => {
    // Written out by hand from docs/JOIN-AUTH.md, not computed, so a layout change fails here.
    const expected = [
      '01', // format tag: join claims v1
      '0001' + '6b', // keyId "k"
      '0024' + '31313131313131312d313131312d343131312d383131312d313131313131313131313131', // matchId
      '0024' + '32323232323232322d323232322d343232322d383232322d323232323232323232323232', // playerId
      '0001' + '73', // serverId "s"
      '0003' + '653a31', // endpoint "e:1"
      '0000000000000001', // issuedAt
      '0000000000000102', // expiresAt
    ].join('');
    expect(encodeJoinClaims(claims()).toString('hex')).toBe(expected);
  });

  it('prefixes strings with their UTF-8 byte length, not their character count', () => {
    const bytes = encodeJoinClaims(claims({ keyId: '', serverId: 'zü' }));
    // keyId "" is a bare 0x0000; "zü" is 3 bytes.
    expect(bytes.subarray(1, 3).toString('hex')).toBe('0000');
    const serverOffset = 1 + 2 + 2 + 36 + 2 + 36;
    expect(bytes.subarray(serverOffset, serverOffset + 5).toString('hex')).toBe('00037ac3bc');
  });

  it('encodes times as big-endian epoch milliseconds up to 2^53 - 1', () => {
    const bytes = encodeJoinClaims(claims({ issuedAt: T0, expiresAt: Number.MAX_SAFE_INTEGER }));
    expect(bytes.subarray(-16).toString('hex')).toBe('0000019b76daa800001fffffffffffff');
  });

  it('accepts a 255-byte endpoint and refuses a 256-byte one', () => {
    expect(() => encodeJoinClaims(claims({ endpoint: 'é'.repeat(127) + 'x' }))).not.toThrow();
    expect(codeOf(() => encodeJoinClaims(claims({ endpoint: 'é'.repeat(128) })))).toBe(
      JoinAuthErrorCode.INVALID_CLAIMS,
    );
  });

  it.each<[string, Partial<JoinClaims>]>([
    ['an uppercase match id', { matchId: MATCH.toUpperCase().replace(/1/g, 'A') }],
    ['a match id that is not a uuid', { matchId: 'match-1' }],
    ['the nil uuid as player id', { playerId: '00000000-0000-0000-0000-000000000000' }],
    ['a braced player id', { playerId: `{${PLAYER}}` }],
    ['an empty server id', { serverId: '' }],
    ['a server id with a newline', { serverId: 'gs-1\n' }],
    ['a server id of 256 bytes', { serverId: 'x'.repeat(256) }],
    ['an empty endpoint', { endpoint: '' }],
    ['an endpoint with a lone surrogate', { endpoint: 'host\ud800:1' }],
    ['a key id with a space', { keyId: 'key 1' }],
    ['a key id of 65 characters', { keyId: 'k'.repeat(65) }],
    ['a non-ASCII key id', { keyId: 'clé' }],
    ['expiry equal to issue', { issuedAt: 5, expiresAt: 5 }],
    ['expiry before issue', { issuedAt: 5, expiresAt: 4 }],
    ['a negative issue time', { issuedAt: -1 }],
    ['a fractional expiry', { expiresAt: 1000.5 }],
    ['an expiry beyond 2^53 - 1', { expiresAt: 2 ** 53 }],
  ])('refuses %s with INVALID_CLAIMS', (_name, overrides) => {
    expect(codeOf(() => encodeJoinClaims(claims(overrides)))).toBe(
      JoinAuthErrorCode.INVALID_CLAIMS,
    );
  });

  it('names the offending field in the error message', () => {
    expect(() => encodeJoinClaims(claims({ serverId: '' }))).toThrow(/serverId/);
  });
});

describe(decodeJoinClaims.name, () => {
  it('round-trips every claim', () => {
    const original = claims({
      keyId: 'mp-2026-01',
      serverId: 'gs-東京',
      issuedAt: T0,
      expiresAt: T0 + 1,
    });
    expect(decodeJoinClaims(encodeJoinClaims(original))).toEqual(original);
  });

  it('refuses trailing bytes', () => {
    const bytes = Buffer.concat([encodeJoinClaims(claims()), Buffer.of(0)]);
    expect(() => decodeJoinClaims(bytes)).toThrow(/trailing/);
  });

  it('refuses every truncation', () => {
    const bytes = encodeJoinClaims(claims());
    for (let length = 0; length < bytes.length; length++) {
      expect(codeOf(() => decodeJoinClaims(bytes.subarray(0, length)))).toBe(
        JoinAuthErrorCode.MALFORMED_BYTES,
      );
    }
  });

  it('refuses another format tag, including the roster manifest tag', () => {
    for (const tag of [0x00, 0x02, 0x03, 0xff]) {
      const bytes = encodeJoinClaims(claims());
      bytes[0] = tag;
      expect(() => decodeJoinClaims(bytes)).toThrow(/format/);
    }
  });

  it('refuses invalid UTF-8 rather than replacing it', () => {
    const bytes = encodeJoinClaims(claims({ serverId: 'a' }));
    const serverOffset = 1 + 3 + 38 + 38 + 2;
    bytes[serverOffset] = 0xff;
    expect(() => decodeJoinClaims(bytes)).toThrow(/UTF-8/);
  });

  it('refuses a time beyond 2^53 - 1', () => {
    const bytes = encodeJoinClaims(claims());
    bytes.writeBigUInt64BE(2n ** 53n, bytes.length - 8);
    expect(codeOf(() => decodeJoinClaims(bytes))).toBe(JoinAuthErrorCode.MALFORMED_BYTES);
  });

  it('refuses well-formed bytes that hold claims encode would refuse', () => {
    const bytes = encodeJoinClaims(claims());
    bytes.writeBigUInt64BE(1n, bytes.length - 8); // expiresAt == issuedAt
    expect(() => decodeJoinClaims(bytes)).toThrow(/expiresAt must be after issuedAt/);
  });
});
