import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { RosterResponse } from '@matchplane/contracts';
import {
  decodeJoinClaims,
  encodeJoinClaims,
  JoinTokenSigner,
  JoinTokenVerifier,
  KeySet,
} from '@matchplane/join-auth';
import {
  newRosterRevision,
  newSignedRoster,
  newTestKeys,
  signRosterEntries,
} from '../../apps/game-server/src/game-server.factories';
import {
  RosterGate,
  type RosterCheck,
  type RosterRevisionCheck,
} from '../../apps/game-server/src/roster.gate';

const SERVER_ID = 'gs-eu-west-1';
const NOW = 1_767_225_600_000;
const { keys, file } = newTestKeys('mp-2026-01', 'mp-2026-07');
const oldSigner = new JoinTokenSigner(keys, 'mp-2026-01');
const newSigner = new JoinTokenSigner(keys, 'mp-2026-07');

function gateFor(roster: RosterResponse, keySet: KeySet = keys): RosterGate {
  return new RosterGate(new JoinTokenVerifier(keySet), {
    serverId: SERVER_ID,
    matchId: roster.matchId,
  });
}

function duel(overrides: Partial<Parameters<typeof newSignedRoster>[0]> = {}): RosterResponse {
  return newSignedRoster({
    signer: newSigner,
    serverId: SERVER_ID,
    issuedAt: NOW,
    players: [{ team: 0 }, { team: 1 }, { team: 1 }],
    ...overrides,
  });
}

function reasonOf(check: RosterCheck | RosterRevisionCheck): string {
  return check.ok ? 'OK' : check.reason;
}

/** The token's claims relabelled with another key id, keeping the MAC of the original key. */
function swapKeyId(token: string, keyId: string): string {
  const [claims = '', mac = ''] = token.split('.');
  const relabelled = encodeJoinClaims({
    ...decodeJoinClaims(Buffer.from(claims, 'base64url')),
    keyId,
  });
  return `${relabelled.toString('base64url')}.${mac}`;
}

describe(RosterGate.name, () => {
  it('accepts the roster the allocator signed and knows every player and team', () => {
    const roster = duel();
    const check = gateFor(roster).check(roster, NOW + 1_000);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect([...check.roster.players.keys()]).toEqual(roster.entries.map((e) => e.playerId));
    expect(check.roster.players.get(roster.entries[0]!.playerId)?.team).toBe(
      roster.entries[0]!.team,
    );
    expect(check.roster.teams).toEqual([0, 1]);
    expect(check.roster.keyId).toBe('mp-2026-07');
  });

  it('rejects a truncated roster (one entry dropped, manifest unchanged)', () => {
    const roster = duel();
    const truncated = { ...roster, entries: roster.entries.slice(0, -1) };
    expect(reasonOf(gateFor(roster).check(truncated, NOW))).toBe('ROSTER_COUNT_MISMATCH');
  });

  it('rejects a reordered roster', () => {
    const roster = duel();
    const reordered = { ...roster, entries: [...roster.entries].reverse() };
    expect(reasonOf(gateFor(roster).check(reordered, NOW))).toBe('ROSTER_NOT_CANONICAL');
  });

  it('rejects an altered roster (a token replaced by another valid one)', () => {
    const roster = duel();
    const first = roster.entries[0]!;
    const replacement = newSigner.sign({
      ...decodeJoinClaims(Buffer.from(first.joinToken.split('.')[0]!, 'base64url')),
      expiresAt: NOW + 3_600_000,
    });
    const altered = {
      ...roster,
      entries: [{ ...first, joinToken: replacement }, ...roster.entries.slice(1)],
    };
    expect(reasonOf(gateFor(roster).check(altered, NOW))).toBe('ROSTER_DIGEST_MISMATCH');
  });

  it('rejects a roster signed for another server, and a token for another server inside it', () => {
    const elsewhere = duel({ serverId: 'gs-us-east-9' });
    const gate = new RosterGate(new JoinTokenVerifier(keys), {
      serverId: SERVER_ID,
      matchId: elsewhere.matchId,
    });
    expect(reasonOf(gate.check(elsewhere, NOW))).toBe('WRONG_SERVER');
    // The response relabelled for this server: the signed manifest still names the other one.
    expect(reasonOf(gate.check({ ...elsewhere, serverId: SERVER_ID }, NOW))).toBe('WRONG_SERVER');

    const oneForeign = duel({
      players: [{ team: 0 }, { team: 1, claims: { serverId: 'gs-us-east-9' } }],
    });
    const check = gateFor(oneForeign).check(oneForeign, NOW);
    expect(reasonOf(check)).toBe('ROSTER_ENTRY_MISMATCH');
  });

  it('rejects a roster for another match than the one the server was launched for', () => {
    const roster = duel();
    const gate = new RosterGate(new JoinTokenVerifier(keys), {
      serverId: SERVER_ID,
      matchId: randomUUID(),
    });
    expect(reasonOf(gate.check(roster, NOW))).toBe('WRONG_MATCH');
  });

  it('rejects a roster with an expired token, naming the player', () => {
    const roster = duel({ players: [{ team: 0 }, { team: 1, claims: { expiresAt: NOW + 10 } }] });
    const expired = roster.entries.find((e) => e.expiresAt === new Date(NOW + 10).toISOString())!;
    const check = gateFor(roster).check(roster, NOW + 10);
    expect(check).toMatchObject({ ok: false, reason: 'EXPIRED', playerId: expired.playerId });
    expect(reasonOf(gateFor(roster).check(roster, NOW + 9))).toBe('OK');
  });

  it('rejects a swapped key id, in a token and in the manifest', () => {
    const roster = duel();
    const [first, ...rest] = roster.entries;
    const swappedToken = signRosterEntries(
      newSigner,
      { matchId: roster.matchId, serverId: SERVER_ID, endpoint: roster.endpoint, issuedAt: NOW },
      [{ ...first!, joinToken: swapKeyId(first!.joinToken, 'mp-2026-01') }, ...rest],
    );
    expect(gateFor(roster).check(swappedToken, NOW)).toMatchObject({
      ok: false,
      reason: 'KEY_MISMATCH',
      playerId: first!.playerId,
    });

    const swappedManifest = { ...roster, manifest: { ...roster.manifest, keyId: 'mp-2026-01' } };
    expect(reasonOf(gateFor(roster).check(swappedManifest, NOW))).toBe('KEY_MISMATCH');
  });

  describe('key rotation', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'mp-gs-keys-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('accepts tokens under the old and the new key while the key file holds both', () => {
      const keyFile = path.join(dir, 'join-keys.json');
      writeFileSync(keyFile, JSON.stringify(file));
      const roster = duel({
        players: [{ team: 0, signer: oldSigner }, { team: 1 }, { team: 1, signer: oldSigner }],
      });
      const fromFile = KeySet.loadFile(keyFile);
      expect(reasonOf(gateFor(roster, fromFile).check(roster, NOW))).toBe('OK');

      // Once the old key is retired, a roster still carrying its tokens is refused.
      writeFileSync(keyFile, JSON.stringify({ 'mp-2026-07': file['mp-2026-07'] }));
      const retired = gateFor(roster, KeySet.loadFile(keyFile)).check(roster, NOW);
      expect(reasonOf(retired)).toBe('UNKNOWN_KEY');
    });
  });

  it('refuses a response that is not shaped like a roster', () => {
    const roster = duel();
    const noTeam = { ...roster, entries: roster.entries.map(({ team: _team, ...rest }) => rest) };
    expect(reasonOf(gateFor(roster).check(noTeam as unknown as RosterResponse, NOW))).toBe(
      'MALFORMED',
    );
    expect(reasonOf(gateFor(roster).check({ ...roster, entries: [] }, NOW))).toBe(
      'ROSTER_COUNT_MISMATCH',
    );
  });

  describe('a later roster revision (backfill)', () => {
    const first = duel();
    const gate = gateFor(first);
    const verified = gate.check(first, NOW);
    if (!verified.ok) throw new Error(`fixture roster rejected: ${verified.reason}`);
    const current = verified.roster;
    const connected = first.entries.map((entry) => entry.playerId);
    const second = newRosterRevision({
      signer: newSigner,
      base: first,
      add: [{ team: 0 }],
      issuedAt: NOW + 1_000,
    });
    const check = (next: RosterResponse, from = current): string =>
      reasonOf(gate.checkRevision(from, next, NOW + 1_000, connected));

    it('takes revision 2 with the added player', () => {
      expect(check(second)).toBe('OK');
    });

    it('refuses revision 2 truncated, reordered or altered', () => {
      expect(check({ ...second, entries: second.entries.slice(0, -1) })).toBe(
        'ROSTER_COUNT_MISMATCH',
      );
      expect(check({ ...second, entries: [...second.entries].reverse() })).toBe(
        'ROSTER_NOT_CANONICAL',
      );
      const [head, ...rest] = second.entries;
      const otherToken = rest[0]!.joinToken;
      expect(check({ ...second, entries: [{ ...head!, joinToken: otherToken }, ...rest] })).toBe(
        'ROSTER_DIGEST_MISMATCH',
      );
    });

    it('refuses revision 2 relabelled as another revision, signed or not', () => {
      // The manifest signs its revision (format 0x04): relabelling it breaks the signature.
      const relabelled = { ...second, revision: 3, manifest: { ...second.manifest, revision: 3 } };
      expect(check(relabelled)).toBe('BAD_SIGNATURE');
      // The response's own revision is not signed; it must agree with the manifest's.
      expect(check({ ...second, revision: 3 })).toBe('REVISION_MISMATCH');
      // The first roster relabelled as revision 2 (signed as format 0x03, claiming 0x04).
      expect(check({ ...first, revision: 2, manifest: { ...first.manifest, revision: 2 } })).toBe(
        'BAD_SIGNATURE',
      );
    });

    it('refuses a revision that is not newer than the current one', () => {
      expect(check(first)).toBe('STALE_REVISION');
      const adopted = gate.checkRevision(current, second, NOW + 1_000, connected);
      if (!adopted.ok) throw new Error(`revision 2 rejected: ${adopted.reason}`);
      expect(check(second, adopted.roster)).toBe('STALE_REVISION');
      expect(check(first, adopted.roster)).toBe('STALE_REVISION');
      const third = newRosterRevision({
        signer: newSigner,
        base: second,
        add: [{ team: 1 }],
        issuedAt: NOW + 2_000,
      });
      expect(reasonOf(gate.checkRevision(adopted.roster, third, NOW + 2_000, connected))).toBe(
        'OK',
      );
    });
  });

  describe('admit', () => {
    const roster = duel();
    const gate = gateFor(roster);
    const verified = gate.check(roster, NOW);
    if (!verified.ok) throw new Error(`fixture roster rejected: ${verified.reason}`);

    it("admits a rostered player's token with its team, offline", () => {
      const entry = roster.entries[1]!;
      expect(gate.admit(verified.roster, entry.joinToken, NOW)).toEqual({
        ok: true,
        player: { playerId: entry.playerId, team: entry.team },
      });
    });

    it('refuses a forged token as INVALID_TOKEN and a stranger as NOT_ON_ROSTER', () => {
      const entry = roster.entries[0]!;
      const forged = `${entry.joinToken.split('.')[0]}.${Buffer.alloc(32, 7).toString('base64url')}`;
      expect(gate.admit(verified.roster, forged, NOW)).toMatchObject({
        ok: false,
        refusal: 'INVALID_TOKEN',
        reason: 'BAD_SIGNATURE',
      });
      const stranger = newSigner.sign({
        matchId: roster.matchId,
        playerId: randomUUID(),
        serverId: SERVER_ID,
        endpoint: roster.endpoint,
        issuedAt: NOW,
        expiresAt: NOW + 60_000,
      });
      expect(gate.admit(verified.roster, stranger, NOW)).toMatchObject({
        ok: false,
        refusal: 'NOT_ON_ROSTER',
      });
      expect(gate.admit(verified.roster, entry.joinToken, NOW + 300_000)).toMatchObject({
        ok: false,
        reason: 'EXPIRED',
      });
    });
  });
});
