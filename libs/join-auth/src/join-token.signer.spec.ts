import { randomUUID } from 'node:crypto';
import { JoinAuthError, JoinAuthErrorCode } from './join-auth.error';
import { newClaims, newKeySet, T0 } from './join-auth.factories';
import { decodeJoinClaims, type JoinClaims } from './join-claims.codec';
import { splitJoinToken } from './join-token.codec';
import { JoinTokenSigner } from './join-token.signer';
import { canonicalRosterOrder } from './roster-manifest';

function errorOf(fn: () => unknown): JoinAuthError {
  try {
    fn();
  } catch (error) {
    if (error instanceof JoinAuthError) return error;
    throw error;
  }
  throw new Error('expected a JoinAuthError');
}

describe(JoinTokenSigner.name, () => {
  it('refuses an active key id its key set does not hold, naming the ids it does', () => {
    const error = errorOf(() => new JoinTokenSigner(newKeySet('k1', 'k2'), 'k3'));
    expect(error.code).toBe(JoinAuthErrorCode.UNKNOWN_ACTIVE_KEY);
    expect(error.message).toBe('active key id "k3" is not in the key set (it holds "k1", "k2")');
  });

  it('signs with the active key, whatever key id the claims object carries', () => {
    const signer = new JoinTokenSigner(newKeySet('k1', 'k2'), 'k2');
    const claims = { ...newClaims(), keyId: 'k1' } as JoinClaims;
    const parts = splitJoinToken(signer.sign(claims));
    expect(decodeJoinClaims(parts!.claimBytes).keyId).toBe('k2');
  });

  it('is deterministic: the same claims and key give the same token', () => {
    const signer = new JoinTokenSigner(newKeySet('k1'), 'k1');
    const claims = newClaims();
    expect(signer.sign(claims)).toBe(signer.sign(claims));
  });

  it('refuses invalid claims with INVALID_CLAIMS', () => {
    const signer = new JoinTokenSigner(newKeySet('k1'), 'k1');
    const error = errorOf(() => signer.sign(newClaims({ serverId: '' })));
    expect(error.code).toBe(JoinAuthErrorCode.INVALID_CLAIMS);
  });

  it('issues a token for a seat, valid for the ttl from its issue time, under the active key', () => {
    const signer = new JoinTokenSigner(newKeySet('k1', 'k2'), 'k2');
    const { matchId, playerId, serverId, endpoint } = newClaims();
    const seat = { matchId, playerId, serverId, endpoint };
    const issued = signer.issue(seat, T0, 60_000);
    expect(issued).toEqual({
      joinToken: signer.sign({ ...seat, issuedAt: T0, expiresAt: T0 + 60_000 }),
      keyId: 'k2',
      issuedAt: new Date(T0),
      expiresAt: new Date(T0 + 60_000),
    });
    const parts = splitJoinToken(issued.joinToken);
    expect(decodeJoinClaims(parts!.claimBytes)).toEqual({
      ...seat,
      keyId: 'k2',
      issuedAt: T0,
      expiresAt: T0 + 60_000,
    });
  });

  describe('signRoster', () => {
    const signer = new JoinTokenSigner(newKeySet('k1'), 'k1');
    const matchId = randomUUID();
    const entries = canonicalRosterOrder(
      [randomUUID(), randomUUID(), randomUUID()].map((playerId) => ({
        playerId,
        token: signer.sign(newClaims({ matchId, playerId })),
      })),
    );

    it('commits to the roster under the active key', () => {
      const manifest = signer.signRoster({ matchId, serverId: 'gs-1', entries, issuedAt: T0 });
      expect(manifest).toEqual({
        matchId,
        serverId: 'gs-1',
        keyId: 'k1',
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        entryCount: 3,
        issuedAt: T0,
        signature: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
    });

    it.each([
      [
        'out of canonical order',
        () => [entries[1]!, entries[0]!, entries[2]!],
        /ascending playerId order/,
      ],
      ['with a player twice', () => [entries[0]!, entries[0]!], /without duplicates/],
      ['that is empty', () => [], /at least one entry/],
      ['with an empty token', () => [{ playerId: entries[0]!.playerId, token: '' }], /token/],
    ])('refuses a roster %s with INVALID_ROSTER', (_name, roster, message) => {
      const error = errorOf(() =>
        signer.signRoster({ matchId, serverId: 'gs-1', entries: roster(), issuedAt: T0 }),
      );
      expect(error.code).toBe(JoinAuthErrorCode.INVALID_ROSTER);
      expect(error.message).toMatch(message);
    });

    it('refuses a match id that is not a uuid', () => {
      const error = errorOf(() =>
        signer.signRoster({
          matchId: matchId.toUpperCase(),
          serverId: 'gs-1',
          entries,
          issuedAt: T0,
        }),
      );
      expect(error.code).toBe(JoinAuthErrorCode.INVALID_ROSTER);
    });
  });
});
