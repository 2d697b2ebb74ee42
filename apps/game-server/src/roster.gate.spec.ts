import type { RosterResponse } from '@matchplane/contracts';
import { JoinTokenSigner, JoinTokenVerifier } from '@matchplane/join-auth';
import { newRosterRevision, newSignedRoster, newTestKeys } from './game-server.factories';
import { RosterGate, type RosterRevisionCheck, type VerifiedRoster } from './roster.gate';

const SERVER_ID = 'gs-unit-1';
const NOW = 1_767_225_600_000;
const { keys } = newTestKeys('k1');
const signer = new JoinTokenSigner(keys, 'k1');

/** A 2v2 of revision 1, verified: the gate, the published roster and what the gate made of it. */
function twoVersusTwo(): { gate: RosterGate; first: RosterResponse; current: VerifiedRoster } {
  const first = newSignedRoster({
    signer,
    serverId: SERVER_ID,
    issuedAt: NOW,
    lifetimeMs: 60_000,
    players: [{ team: 0 }, { team: 0 }, { team: 1 }, { team: 1 }],
  });
  const gate = new RosterGate(new JoinTokenVerifier(keys), {
    serverId: SERVER_ID,
    matchId: first.matchId,
  });
  const check = gate.check(first, NOW);
  if (!check.ok) throw new Error(`fixture roster rejected: ${check.reason}`);
  return { gate, first, current: check.roster };
}

function onTeam(roster: RosterResponse, team: number): string[] {
  return roster.entries.filter((entry) => entry.team === team).map((entry) => entry.playerId);
}

/** Revision 2 of `first`: its first team-0 player dropped as a no-show, a new one added to team 0. */
function replaceOnTeamZero(first: RosterResponse, issuedAt: number) {
  const [noShow = ''] = onTeam(first, 0);
  const next = newRosterRevision({
    signer,
    base: first,
    drop: [noShow],
    add: [{ team: 0 }],
    issuedAt,
  });
  const added = next.entries.find(
    (entry) => !first.entries.some((e) => e.playerId === entry.playerId),
  )!;
  return { noShow, next, added };
}

function reasonOf(check: RosterRevisionCheck): string {
  return check.ok ? 'OK' : check.reason;
}

describe(RosterGate.name, () => {
  it('records the signed revision and each token of the first roster', () => {
    const { first, current } = twoVersusTwo();
    expect(current.revision).toBe(1);
    expect(current.tokens).toEqual(new Map(first.entries.map((e) => [e.playerId, e.joinToken])));
  });

  describe('checkRevision', () => {
    it('accepts a backfill revision: the no-show dropped, an added player on their team, carried-over tokens unchanged', () => {
      const { gate, first, current } = twoVersusTwo();
      const { noShow, next, added } = replaceOnTeamZero(first, NOW + 30_000);
      const connected = first.entries.map((e) => e.playerId).filter((id) => id !== noShow);

      const check = gate.checkRevision(current, next, NOW + 30_000, connected);
      expect(check).toMatchObject({
        ok: true,
        added: [{ playerId: added.playerId, team: 0 }],
      });
      if (!check.ok) return;
      expect(check.roster.revision).toBe(2);
      expect(check.roster.players.has(noShow)).toBe(false);
      expect(check.roster.players.get(added.playerId)).toEqual({
        playerId: added.playerId,
        team: 0,
      });
      expect(check.roster.tokens.get(added.playerId)).toBe(added.joinToken);
    });

    it("does not re-check carried-over tokens' expiry, but refuses an added player's expired token", () => {
      const { gate, first, current } = twoVersusTwo();
      // The first roster's tokens expired at NOW + 60 s; the players they admitted are in.
      const later = NOW + 120_000;
      const fresh = newRosterRevision({ signer, base: first, add: [{ team: 1 }], issuedAt: later });
      expect(reasonOf(gate.checkRevision(current, fresh, later, []))).toBe('OK');

      const stale = newRosterRevision({
        signer,
        base: first,
        add: [{ team: 1, claims: { issuedAt: later - 10_000, expiresAt: later } }],
        issuedAt: later,
      });
      const check = gate.checkRevision(current, stale, later, []);
      const added = stale.entries.find((entry) => !current.players.has(entry.playerId))!;
      expect(check).toMatchObject({ ok: false, reason: 'EXPIRED', playerId: added.playerId });
    });

    it("refuses an added token under a key the server does not hold (the manifest checks no token's MAC)", () => {
      const { gate, first, current } = twoVersusTwo();
      const foreign = new JoinTokenSigner(newTestKeys('k-foreign').keys, 'k-foreign');
      const next = newRosterRevision({
        signer,
        base: first,
        add: [{ team: 1, signer: foreign }],
        issuedAt: NOW,
      });
      const added = next.entries.find((entry) => !current.players.has(entry.playerId))!;
      expect(gate.checkRevision(current, next, NOW, [])).toMatchObject({
        ok: false,
        reason: 'UNKNOWN_KEY',
        playerId: added.playerId,
      });
    });

    it('refuses a revision that gives a player already on the roster another token or team', () => {
      const { gate, first, current } = twoVersusTwo();
      const [player] = onTeam(first, 1);
      const reissued = newRosterRevision({
        signer,
        base: first,
        drop: [player!],
        add: [{ team: 1, playerId: player! }],
        issuedAt: NOW,
      });
      expect(gate.checkRevision(current, reissued, NOW, [])).toMatchObject({
        ok: false,
        reason: 'ROSTER_ENTRY_CHANGED',
        playerId: player,
      });

      const moved = newRosterRevision({
        signer,
        base: {
          ...first,
          entries: first.entries.map((e) => (e.playerId === player ? { ...e, team: 0 } : e)),
        },
        add: [],
        issuedAt: NOW,
      });
      expect(gate.checkRevision(current, moved, NOW, [])).toMatchObject({
        ok: false,
        reason: 'ROSTER_ENTRY_CHANGED',
        playerId: player,
      });
    });

    it('refuses a revision that drops a connected player, and takes one that drops a no-show', () => {
      const { gate, first, current } = twoVersusTwo();
      const { noShow: dropped, next } = replaceOnTeamZero(first, NOW);
      expect(gate.checkRevision(current, next, NOW, [dropped])).toMatchObject({
        ok: false,
        reason: 'CONNECTED_PLAYER_DROPPED',
        playerId: dropped,
      });
      const others = first.entries.map((e) => e.playerId).filter((id) => id !== dropped);
      expect(reasonOf(gate.checkRevision(current, next, NOW, others))).toBe('OK');
    });
  });
});
