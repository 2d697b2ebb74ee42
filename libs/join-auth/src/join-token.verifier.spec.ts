import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { newClaims, newKeySet, T0, testKey } from './join-auth.factories';
import { decodeJoinClaims, encodeJoinClaims, type UnsignedJoinClaims } from './join-claims.codec';
import { formatJoinToken, splitJoinToken } from './join-token.codec';
import { JoinTokenSigner } from './join-token.signer';
import {
  DEFAULT_CLOCK_SKEW_MS,
  JoinAuthRejectedError,
  type JoinTokenExpectation,
  JoinTokenRejectionReason,
  type JoinTokenVerification,
  JoinTokenVerifier,
} from './join-token.verifier';
import { KeySet } from './key-set';
import { encodeRosterManifest } from './roster-manifest';

const keys = newKeySet('old', 'new');
const oldSigner = new JoinTokenSigner(keys, 'old');
const newSigner = new JoinTokenSigner(keys, 'new');
const verifier = new JoinTokenVerifier(keys);

function expectFor(claims: UnsignedJoinClaims, overrides: Partial<JoinTokenExpectation> = {}) {
  return { serverId: claims.serverId, matchId: claims.matchId, now: claims.issuedAt, ...overrides };
}

function reasonOf(result: JoinTokenVerification): string {
  return result.ok ? 'OK' : result.reason;
}

/** Re-encodes a token's claims with changes, keeping its MAC. */
function tamper(token: string, change: (bytes: Buffer) => Buffer): string {
  const parts = splitJoinToken(token)!;
  return formatJoinToken(change(parts.claimBytes), parts.mac);
}

/** The same claim bytes, MAC'd under another key than the one they name. */
function macUnder(token: string, keyId: string): string {
  const { claimBytes } = splitJoinToken(token)!;
  return formatJoinToken(claimBytes, keys.mac(keyId, claimBytes)!);
}

function relabel(token: string, keyId: string): string {
  return tamper(token, (bytes) => encodeJoinClaims({ ...decodeJoinClaims(bytes), keyId }));
}

describe(JoinTokenVerifier.name, () => {
  it('accepts a token for this server and match and returns its claims', () => {
    const claims = newClaims();
    const result = verifier.verify(oldSigner.sign(claims), expectFor(claims));
    expect(result).toEqual({ ok: true, claims: { ...claims, keyId: 'old' } });
  });

  it('accepts a token for any match when no match is expected', () => {
    const claims = newClaims();
    const result = verifier.verify(
      oldSigner.sign(claims),
      expectFor(claims, { matchId: undefined }),
    );
    expect(result.ok).toBe(true);
  });

  describe('rejection reasons', () => {
    const claims = newClaims();
    const token = oldSigner.sign(claims);

    it.each<[string, () => string, Partial<JoinTokenExpectation>, JoinTokenRejectionReason]>([
      ['an expired token', () => token, { now: claims.expiresAt }, 'EXPIRED'],
      [
        'a token issued beyond the clock skew',
        () => token,
        { now: claims.issuedAt - DEFAULT_CLOCK_SKEW_MS - 1 },
        'NOT_YET_VALID',
      ],
      ['a token for another server', () => token, { serverId: 'gs-2' }, 'WRONG_SERVER'],
      ['a token for another match', () => token, { matchId: newClaims().matchId }, 'WRONG_MATCH'],
      [
        'a token naming a key the verifier does not hold',
        () => new JoinTokenSigner(newKeySet('other'), 'other').sign(claims),
        {},
        'UNKNOWN_KEY',
      ],
      [
        'a token with tampered claims',
        () =>
          tamper(token, (b) => encodeJoinClaims({ ...decodeJoinClaims(b), endpoint: '6.6.6.6:1' })),
        {},
        'BAD_SIGNATURE',
      ],
      [
        'a token with a tampered MAC',
        () => `${token.slice(0, -2)}${token.endsWith('AA') ? 'AQ' : 'AA'}`,
        {},
        'BAD_SIGNATURE',
      ],
      [
        'a token whose key id was swapped to another held key',
        () => relabel(token, 'new'),
        {},
        'KEY_MISMATCH',
      ],
      [
        'a token signed under one held key but naming another',
        () => macUnder(token, 'new'),
        {},
        'KEY_MISMATCH',
      ],
      [
        'a token with trailing claim bytes',
        () => tamper(token, (b) => Buffer.concat([b, Buffer.of(0)])),
        {},
        'MALFORMED',
      ],
      [
        'a token with truncated claim bytes',
        () => tamper(token, (b) => b.subarray(0, -1)),
        {},
        'MALFORMED',
      ],
      [
        'a token with a wrong format tag',
        () => tamper(token, (b) => Buffer.concat([Buffer.of(2), b.subarray(1)])),
        {},
        'MALFORMED',
      ],
      ['a token with one part', () => token.split('.')[0]!, {}, 'MALFORMED'],
      ['a token with three parts', () => `${token}.AA`, {}, 'MALFORMED'],
      ['a token with base64 padding', () => `${token}=`, {}, 'MALFORMED'],
      ['a token with a character outside base64url', () => `+${token}`, {}, 'MALFORMED'],
      ['a token with a short MAC', () => token.slice(0, -4), {}, 'MALFORMED'],
      ['an oversized token', () => `${'A'.repeat(2000)}.${token.split('.')[1]!}`, {}, 'MALFORMED'],
      ['an empty string', () => '', {}, 'MALFORMED'],
    ])('rejects %s as %s', (_name, make, overrides, reason) => {
      const result = verifier.verify(make(), expectFor(claims, overrides));
      expect(reasonOf(result)).toBe(reason);
      expect(result.ok ? '' : result.message).not.toBe('');
    });

    it('covers every rejection reason', () => {
      expect(Object.keys(JoinTokenRejectionReason).sort()).toEqual([
        'BAD_SIGNATURE',
        'EXPIRED',
        'KEY_MISMATCH',
        'MALFORMED',
        'NOT_YET_VALID',
        'UNKNOWN_KEY',
        'WRONG_MATCH',
        'WRONG_SERVER',
      ]);
    });

    it('falls back to BAD_SIGNATURE for a swapped key id when it does not hold the signing key', () => {
      const newOnly = new JoinTokenVerifier(keys.without('old'));
      expect(reasonOf(newOnly.verify(relabel(token, 'new'), expectFor(claims)))).toBe(
        'BAD_SIGNATURE',
      );
    });

    it('reports KEY_MISMATCH when the key id was relabelled to one it does not hold at all', () => {
      expect(reasonOf(verifier.verify(relabel(token, 'ghost'), expectFor(claims)))).toBe(
        'KEY_MISMATCH',
      );
    });

    it('checks the signature before anything the claims say', () => {
      const forged = tamper(token, (b) =>
        encodeJoinClaims({ ...decodeJoinClaims(b), serverId: 'gs-9' }),
      );
      expect(reasonOf(verifier.verify(forged, expectFor(claims, { now: claims.expiresAt })))).toBe(
        'BAD_SIGNATURE',
      );
    });

    it('never names key material in a message', () => {
      const result = verifier.verify(relabel(token, 'new'), expectFor(claims));
      expect(result.ok ? '' : result.message).not.toContain(testKey('old').toString('base64url'));
      expect(result.ok ? '' : result.message).toBe('names key "new" but was signed with key "old"');
    });
  });

  describe('clock', () => {
    const claims = newClaims({ issuedAt: T0, expiresAt: T0 + 1000 });
    const token = oldSigner.sign(claims);
    const at = (now: number) => reasonOf(verifier.verify(token, expectFor(claims, { now })));

    it('is valid from issuedAt minus the skew until just before expiresAt', () => {
      expect(at(T0 - DEFAULT_CLOCK_SKEW_MS)).toBe('OK');
      expect(at(T0 - DEFAULT_CLOCK_SKEW_MS - 1)).toBe('NOT_YET_VALID');
      expect(at(T0 + 999)).toBe('OK');
      expect(at(T0 + 1000)).toBe('EXPIRED');
    });

    it('takes its skew from the options', () => {
      const strict = new JoinTokenVerifier(keys, { clockSkewMs: 0 });
      expect(reasonOf(strict.verify(token, expectFor(claims, { now: T0 - 1 })))).toBe(
        'NOT_YET_VALID',
      );
      expect(() => new JoinTokenVerifier(keys, { clockSkewMs: -1 })).toThrow(JoinAuthError);
    });
  });

  describe('rotation', () => {
    it('accepts tokens under the old and the new key while both are current', () => {
      const a = newClaims();
      const b = newClaims();
      expect(verifier.verify(oldSigner.sign(a), expectFor(a)).ok).toBe(true);
      expect(verifier.verify(newSigner.sign(b), expectFor(b)).ok).toBe(true);
    });

    it('rejects the retired key as UNKNOWN_KEY once it leaves the verifier set', () => {
      const claims = newClaims();
      const retired = new JoinTokenVerifier(keys.without('old'));
      expect(retired.keyIds).toEqual(['new']);
      expect(reasonOf(retired.verify(oldSigner.sign(claims), expectFor(claims)))).toBe(
        'UNKNOWN_KEY',
      );
      expect(retired.verify(newSigner.sign(claims), expectFor(claims)).ok).toBe(true);
    });

    it('accepts a raw-file key (id "") beside named keys', () => {
      const raw = KeySet.fromRawKey(testKey('raw'));
      const both = new JoinTokenVerifier(KeySet.union(keys, raw));
      const claims = newClaims();
      const token = new JoinTokenSigner(raw, '').sign(claims);
      expect(both.verify(token, expectFor(claims))).toMatchObject({
        ok: true,
        claims: { keyId: '' },
      });
    });
  });

  describe('verifyOrThrow', () => {
    it('returns the claims of a valid token', () => {
      const claims = newClaims();
      expect(verifier.verifyOrThrow(oldSigner.sign(claims), expectFor(claims)).playerId).toBe(
        claims.playerId,
      );
    });

    it('throws a JoinAuthRejectedError carrying the reason', () => {
      const claims = newClaims();
      const token = oldSigner.sign(claims);
      expect(() => verifier.verifyOrThrow(token, expectFor(claims, { serverId: 'gs-2' }))).toThrow(
        expect.objectContaining({ code: JoinAuthErrorCode.REJECTED, reason: 'WRONG_SERVER' }),
      );
      expect(() => verifier.verifyOrThrow(token, expectFor(claims, { serverId: 'gs-2' }))).toThrow(
        JoinAuthRejectedError,
      );
    });
  });

  it.each<[string, Partial<JoinTokenExpectation>]>([
    ['now is NaN', { now: Number.NaN }],
    ['now is fractional', { now: T0 + 0.5 }],
    ['the server id is empty', { serverId: '' }],
    ['the match id is not a uuid', { matchId: 'm-1' }],
  ])('throws INVALID_EXPECTATION instead of verifying when %s', (_name, overrides) => {
    const claims = newClaims();
    expect(() => verifier.verify(oldSigner.sign(claims), expectFor(claims, overrides))).toThrow(
      expect.objectContaining({ code: JoinAuthErrorCode.INVALID_EXPECTATION }),
    );
  });

  it('never accepts a roster manifest signature as a join token', () => {
    const claims = newClaims();
    const entries = [{ playerId: claims.playerId, token: oldSigner.sign(claims) }];
    const { signature, ...manifest } = oldSigner.signRoster({
      matchId: claims.matchId,
      serverId: claims.serverId,
      entries,
      issuedAt: T0,
    });
    // A valid MAC under a held key, over bytes that are a manifest: refused on the format tag.
    const disguised = formatJoinToken(
      encodeRosterManifest(manifest),
      Buffer.from(signature, 'base64url'),
    );
    expect(reasonOf(verifier.verify(disguised, expectFor(claims)))).toBe('MALFORMED');
  });
});
