import { createHash, randomUUID } from 'node:crypto';
import { newClaims, newKeySet, T0 } from './join-auth.factories';
import { JoinTokenSigner } from './join-token.signer';
import {
  type RosterExpectation,
  type RosterVerification,
  JoinTokenVerifier,
} from './join-token.verifier';
import {
  canonicalRosterOrder,
  encodeRosterDigestInput,
  encodeRosterManifest,
  rosterDigest,
  type RosterEntry,
  type SignedRosterManifest,
} from './roster-manifest';

const keys = newKeySet('k1', 'k2');
const signer = new JoinTokenSigner(keys, 'k1');
const verifier = new JoinTokenVerifier(keys);
const serverId = 'gs-1';

function newRoster(size = 4): { matchId: string; entries: RosterEntry[] } {
  const matchId = randomUUID();
  const entries = canonicalRosterOrder(
    Array.from({ length: size }, () => {
      const playerId = randomUUID();
      return { playerId, token: signer.sign(newClaims({ matchId, playerId, serverId })) };
    }),
  );
  return { matchId, entries };
}

function reasonOf(result: RosterVerification): string {
  return result.ok ? 'OK' : result.reason;
}

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

describe(canonicalRosterOrder.name, () => {
  it('sorts by player id and leaves its input alone', () => {
    const entries = [
      { playerId: 'bbbbbbbb-0000-4000-8000-000000000000', token: 't2' },
      { playerId: 'aaaaaaaa-0000-4000-8000-000000000000', token: 't1' },
    ];
    expect(canonicalRosterOrder(entries).map((e) => e.token)).toEqual(['t1', 't2']);
    expect(entries[0]!.token).toBe('t2');
  });

  it('refuses a player twice', () => {
    const entry = { playerId: randomUUID(), token: 't' };
    expect(() => canonicalRosterOrder([entry, { ...entry, token: 'u' }])).toThrow(/duplicates/);
  });
});

describe(rosterDigest.name, () => {
  it('hashes the documented layout: tag, match, server, uint32 count, then each player and token', () => {
    const matchId = '11111111-1111-4111-8111-111111111111';
    const playerId = '22222222-2222-4222-8222-222222222222';
    const entries = [{ playerId, token: 'a.b' }];
    const expected = [
      '02', // format tag: roster digest v1
      '0024' + hex(matchId),
      '0004' + hex('gs-1'),
      '00000001', // entry count
      '0024' + hex(playerId),
      '0003' + hex('a.b'),
    ].join('');
    expect(encodeRosterDigestInput(matchId, 'gs-1', entries).toString('hex')).toBe(expected);
    expect(rosterDigest(matchId, 'gs-1', entries)).toEqual(
      createHash('sha256').update(Buffer.from(expected, 'hex')).digest(),
    );
  });
});

describe(encodeRosterManifest.name, () => {
  const firstRoster = {
    matchId: '11111111-1111-4111-8111-111111111111',
    serverId: 'gs-1',
    keyId: 'k1',
    digest: 'ab'.repeat(32),
    entryCount: 2,
    issuedAt: 0x0102,
  };

  it('lays the manifest out as documented: tag, key, match, server, raw digest, count, time', () => {
    const manifest = firstRoster;
    const expected = [
      '03', // format tag: roster manifest v1
      '0002' + hex('k1'),
      '0024' + hex(manifest.matchId),
      '0004' + hex('gs-1'),
      'ab'.repeat(32), // digest, no length prefix
      '00000002',
      '0000000000000102',
    ].join('');
    expect(encodeRosterManifest(manifest).toString('hex')).toBe(expected);
  });

  it('signs a backfill revision as version 2: version 1 fields, then the uint32 revision', () => {
    const manifest = firstRoster;
    const v1 = encodeRosterManifest(manifest).toString('hex');
    expect(encodeRosterManifest({ ...manifest, revision: 1 }).toString('hex')).toBe(v1);
    expect(encodeRosterManifest({ ...manifest, revision: 3 }).toString('hex')).toBe(
      '04' + v1.slice(2) + '00000003',
    );
  });

  it('refuses a revision that is not a positive uint32', () => {
    const manifest = firstRoster;
    for (const revision of [0, -1, 1.5, 2 ** 32]) {
      expect(() => encodeRosterManifest({ ...manifest, revision })).toThrow(/revision/);
    }
  });
});

describe(`${JoinTokenVerifier.name} roster`, () => {
  const { matchId, entries } = newRoster();
  const manifest = signer.signRoster({ matchId, serverId, entries, issuedAt: T0 });
  const expectation: RosterExpectation = { serverId, matchId, now: T0 + 1000 };
  const verify = (m: unknown, e: readonly RosterEntry[], x: Partial<RosterExpectation> = {}) =>
    reasonOf(verifier.verifyRoster(m, e, { ...expectation, ...x }));

  it('accepts a backfill revision and refuses it relabelled as another revision', () => {
    const revised = signer.signRoster({ matchId, serverId, entries, issuedAt: T0, revision: 2 });
    expect(revised.revision).toBe(2);
    expect(verify(revised, entries)).toBe('OK');
    expect(verify({ ...revised, revision: 3 }, entries)).toBe('BAD_SIGNATURE');
    const { revision: _revision, ...asFirst } = revised;
    expect(verify(asFirst, entries)).toBe('BAD_SIGNATURE');
  });

  it('accepts the roster exactly as signed and returns its manifest', () => {
    const { signature: _signature, ...unsigned } = manifest;
    expect(verifier.verifyRoster(manifest, entries, expectation)).toEqual({
      ok: true,
      manifest: unsigned,
    });
  });

  it('accepts the manifest after a JSON round trip, as a game server receives it', () => {
    const received: unknown = JSON.parse(JSON.stringify({ manifest, entries }));
    const { manifest: m, entries: e } = received as { manifest: unknown; entries: RosterEntry[] };
    expect(verify(m, e)).toBe('OK');
  });

  it('rejects a truncated roster even though every remaining entry is valid', () => {
    for (let keep = 0; keep < entries.length; keep++) {
      expect(verify(manifest, entries.slice(0, keep))).toBe('ROSTER_COUNT_MISMATCH');
    }
    expect(verify(manifest, entries.slice(1))).toBe('ROSTER_COUNT_MISMATCH');
  });

  it('rejects a roster with an extra entry', () => {
    const extra = newRoster(1).entries[0]!;
    expect(verify(manifest, canonicalRosterOrder([...entries, extra]))).toBe(
      'ROSTER_COUNT_MISMATCH',
    );
  });

  it('rejects a truncated roster whose count was lowered to match', () => {
    const lowered: SignedRosterManifest = { ...manifest, entryCount: entries.length - 1 };
    expect(verify(lowered, entries.slice(0, -1))).toBe('BAD_SIGNATURE');
  });

  it('rejects a reordered roster', () => {
    const reordered = [entries[1]!, entries[0]!, ...entries.slice(2)];
    expect(verify(manifest, reordered)).toBe('ROSTER_NOT_CANONICAL');
  });

  it('rejects an entry replaced by another valid token for the same player', () => {
    const altered = entries.map((entry, index) =>
      index === 2
        ? {
            ...entry,
            token: signer.sign(
              newClaims({ matchId, playerId: entry.playerId, serverId, expiresAt: T0 + 999_999 }),
            ),
          }
        : entry,
    );
    expect(verify(manifest, altered)).toBe('ROSTER_DIGEST_MISMATCH');
  });

  it('rejects a player swapped for another in the same position', () => {
    const other = newRoster(1).entries[0]!;
    const swapped = canonicalRosterOrder([...entries.slice(1), other]);
    expect(verify(manifest, swapped)).toBe('ROSTER_DIGEST_MISMATCH');
  });

  it('rejects a signed roster whose token names another player', () => {
    const [a, b] = newRoster(2).entries as [RosterEntry, RosterEntry];
    const crossed = [
      { playerId: a.playerId, token: b.token },
      { playerId: b.playerId, token: a.token },
    ];
    const crossedManifest = signer.signRoster({
      matchId,
      serverId,
      entries: crossed,
      issuedAt: T0,
    });
    expect(verify(crossedManifest, crossed)).toBe('ROSTER_ENTRY_MISMATCH');
  });

  it('rejects a roster for another server or match', () => {
    expect(verify(manifest, entries, { serverId: 'gs-2' })).toBe('WRONG_SERVER');
    expect(verify(manifest, entries, { matchId: randomUUID() })).toBe('WRONG_MATCH');
  });

  it('rejects a manifest issued beyond the clock skew', () => {
    expect(verify(manifest, entries, { now: T0 - 60_000 })).toBe('NOT_YET_VALID');
  });

  it('rejects a manifest under an unknown or retired key', () => {
    const retired = new JoinTokenVerifier(keys.without('k1'));
    expect(reasonOf(retired.verifyRoster(manifest, entries, expectation))).toBe('UNKNOWN_KEY');
  });

  it('rejects a manifest whose key id was swapped to another held key', () => {
    expect(verify({ ...manifest, keyId: 'k2' }, entries)).toBe('KEY_MISMATCH');
  });

  it('rejects a manifest with an altered digest', () => {
    const digest = `${manifest.digest.slice(0, -1)}${manifest.digest.endsWith('0') ? '1' : '0'}`;
    expect(verify({ ...manifest, digest }, entries)).toBe('BAD_SIGNATURE');
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a manifest without a signature', { ...manifest, signature: undefined }],
    ['a padded signature', { ...manifest, signature: `${manifest.signature}=` }],
    ['an uppercase digest', { ...manifest, digest: manifest.digest.toUpperCase() }],
    ['a string entry count', { ...manifest, entryCount: String(manifest.entryCount) }],
    ['a zero entry count', { ...manifest, entryCount: 0 }],
    ['a fractional issue time', { ...manifest, issuedAt: T0 + 0.5 }],
  ])('rejects %s as MALFORMED', (_name, malformed) => {
    expect(verify(malformed, entries)).toBe('MALFORMED');
  });

  it('rejects entries that are not a roster as MALFORMED', () => {
    expect(verify(manifest, 'nope' as unknown as RosterEntry[])).toBe('MALFORMED');
    const bad = entries.map((e, i) => (i === 0 ? { ...e, playerId: 'p' } : e));
    expect(verify(manifest, bad)).toBe('MALFORMED');
  });

  it('throws the rejection from verifyRosterOrThrow', () => {
    expect(() => verifier.verifyRosterOrThrow(manifest, entries.slice(1), expectation)).toThrow(
      expect.objectContaining({ reason: 'ROSTER_COUNT_MISMATCH' }),
    );
    expect(verifier.verifyRosterOrThrow(manifest, entries, expectation).digest).toBe(
      manifest.digest,
    );
  });
});
