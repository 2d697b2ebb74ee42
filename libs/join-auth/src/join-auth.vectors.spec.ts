import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJoinClaims, encodeJoinClaims, type JoinClaims } from './join-claims.codec';
import { JoinTokenSigner } from './join-token.signer';
import {
  type JoinTokenExpectation,
  JoinTokenVerifier,
  type RosterVerification,
  type JoinTokenVerification,
} from './join-token.verifier';
import { KeySet } from './key-set';
import {
  encodeRosterDigestInput,
  encodeRosterManifest,
  rosterDigest,
  type RosterEntry,
  type SignedRosterManifest,
} from './roster-manifest';

// The golden vectors other languages' game servers check themselves against. The file was
// generated once; these tests hold the implementation to it, so a layout change fails here.
interface Vectors {
  clockSkewMs: number;
  keys: Record<string, string>;
  rawKeyBase64: string;
  tokens: {
    name: string;
    claims: JoinClaims;
    claimBytesHex: string;
    macHex: string;
    token: string;
  }[];
  rejections: {
    name: string;
    token: string;
    verifierKeyIds: string[];
    expect: JoinTokenExpectation;
    reason: string;
  }[];
  /** Valid tokens at the edges: the last millisecond, the clock skew, a key set after rotation. */
  acceptances: {
    name: string;
    token: string;
    verifierKeyIds: string[];
    expect: JoinTokenExpectation;
  }[];
  rosters: {
    name: string;
    keyId: string;
    matchId: string;
    serverId: string;
    issuedAt: number;
    entries: RosterEntry[];
    digestInputHex: string;
    digestHex: string;
    manifestBytesHex: string;
    manifestMacHex: string;
    manifest: SignedRosterManifest;
    expect: JoinTokenExpectation;
    rejections: {
      name: string;
      manifest: unknown;
      entries: RosterEntry[];
      expect: JoinTokenExpectation;
      reason: string;
    }[];
  }[];
}

// JOIN_AUTH_VECTORS points at another copy: sdks/run-tests.sh proves with a mutated copy that a
// one-byte change to the specification fails this spec as it fails every SDK's.
const vectorsPath =
  process.env.JOIN_AUTH_VECTORS ?? join(__dirname, '../../../test/fixtures/join-auth-vectors.json');
const vectors = JSON.parse(readFileSync(vectorsPath, 'utf8')) as Vectors;

const keys = KeySet.union(
  KeySet.fromBase64Map(vectors.keys),
  KeySet.fromRawKey(Buffer.from(vectors.rawKeyBase64, 'base64')),
);
const rawKeys = new Map<string, Buffer>([
  ...Object.entries(vectors.keys).map(([id, key]): [string, Buffer] => [
    id,
    Buffer.from(key, 'base64'),
  ]),
  ['', Buffer.from(vectors.rawKeyBase64, 'base64')],
]);
const verifierHolding = (keyIds: readonly string[]) =>
  new JoinTokenVerifier(keys.without(...keys.ids().filter((id) => !keyIds.includes(id))), {
    clockSkewMs: vectors.clockSkewMs,
  });
const everyKey = verifierHolding(keys.ids());
const reasonOf = (result: JoinTokenVerification | RosterVerification) =>
  result.ok ? 'OK' : result.reason;
// An independent HMAC, straight from node:crypto, so the vectors check KeySet too.
const hmacHex = (keyId: string, bytes: Buffer) =>
  createHmac('sha256', rawKeys.get(keyId)!).update(bytes).digest('hex');

describe('join-auth golden vectors', () => {
  it('hold tokens under every kind of key and at least one of each rejection', () => {
    expect(new Set(vectors.tokens.map((t) => t.claims.keyId))).toEqual(new Set(keys.ids()));
    expect(new Set(vectors.rejections.map((r) => r.reason))).toEqual(
      new Set([
        'BAD_SIGNATURE',
        'EXPIRED',
        'KEY_MISMATCH',
        'MALFORMED',
        'NOT_YET_VALID',
        'UNKNOWN_KEY',
        'WRONG_MATCH',
        'WRONG_SERVER',
      ]),
    );
  });

  it('hold rosters under more than one key and every roster rejection', () => {
    expect(new Set(vectors.rosters.map((r) => r.keyId)).size).toBeGreaterThan(1);
    const reasons = new Set(vectors.rosters.flatMap((r) => r.rejections.map((j) => j.reason)));
    for (const reason of [
      'BAD_SIGNATURE',
      'KEY_MISMATCH',
      'MALFORMED',
      'NOT_YET_VALID',
      'WRONG_SERVER',
      'WRONG_MATCH',
      'ROSTER_COUNT_MISMATCH',
      'ROSTER_NOT_CANONICAL',
      'ROSTER_DIGEST_MISMATCH',
      'ROSTER_ENTRY_MISMATCH',
    ]) {
      expect(reasons).toContain(reason);
    }
  });

  describe.each(vectors.tokens.map((t) => [t.name, t] as const))('token %s', (_name, vector) => {
    const bytes = Buffer.from(vector.claimBytesHex, 'hex');
    const { keyId, ...unsigned } = vector.claims;

    it('encodes its claims to exactly the expected bytes, and back', () => {
      expect(encodeJoinClaims(vector.claims).toString('hex')).toBe(vector.claimBytesHex);
      expect(decodeJoinClaims(bytes)).toEqual(vector.claims);
    });

    it('MACs those bytes to the expected MAC and token', () => {
      expect(hmacHex(keyId, bytes)).toBe(vector.macHex);
      expect(vector.token).toBe(
        `${bytes.toString('base64url')}.${Buffer.from(vector.macHex, 'hex').toString('base64url')}`,
      );
      expect(new JoinTokenSigner(keys, keyId).sign(unsigned)).toBe(vector.token);
    });

    it('verifies', () => {
      const result = everyKey.verify(vector.token, {
        serverId: vector.claims.serverId,
        matchId: vector.claims.matchId,
        now: vector.claims.issuedAt,
      });
      expect(result).toEqual({ ok: true, claims: vector.claims });
    });
  });

  it.each(vectors.rejections.map((r) => [r.name, r.reason, r] as const))(
    'rejects %s as %s',
    (_name, reason, vector) => {
      expect(
        reasonOf(verifierHolding(vector.verifierKeyIds).verify(vector.token, vector.expect)),
      ).toBe(reason);
    },
  );

  it.each(vectors.acceptances.map((a) => [a.name, a] as const))('accepts %s', (_name, vector) => {
    expect(
      reasonOf(verifierHolding(vector.verifierKeyIds).verify(vector.token, vector.expect)),
    ).toBe('OK');
  });

  describe.each(vectors.rosters.map((r) => [r.name, r] as const))('roster %s', (_name, vector) => {
    it('hashes its entries to exactly the expected digest', () => {
      const input = encodeRosterDigestInput(vector.matchId, vector.serverId, vector.entries);
      expect(input.toString('hex')).toBe(vector.digestInputHex);
      expect(createHash('sha256').update(input).digest('hex')).toBe(vector.digestHex);
      expect(rosterDigest(vector.matchId, vector.serverId, vector.entries).toString('hex')).toBe(
        vector.digestHex,
      );
    });

    it('signs exactly the expected manifest bytes to the expected manifest', () => {
      const { signature, ...unsigned } = vector.manifest;
      const bytes = encodeRosterManifest(unsigned);
      expect(bytes.toString('hex')).toBe(vector.manifestBytesHex);
      expect(hmacHex(vector.keyId, bytes)).toBe(vector.manifestMacHex);
      expect(Buffer.from(signature, 'base64url').toString('hex')).toBe(vector.manifestMacHex);
      const signed = new JoinTokenSigner(keys, vector.keyId).signRoster(vector);
      expect(signed).toEqual(vector.manifest);
    });

    it('verifies', () => {
      expect(reasonOf(everyKey.verifyRoster(vector.manifest, vector.entries, vector.expect))).toBe(
        'OK',
      );
    });

    it.each(vector.rejections.map((r) => [r.name, r.reason, r] as const))(
      'rejects %s as %s',
      (_rejection, reason, rejection) => {
        expect(
          reasonOf(everyKey.verifyRoster(rejection.manifest, rejection.entries, rejection.expect)),
        ).toBe(reason);
      },
    );
  });
});
