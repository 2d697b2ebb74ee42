import { ServerRoutes, type RosterResponse } from '@matchplane/contracts';
import { decodeJoinClaims, encodeJoinClaims, JoinTokenVerifier } from '@matchplane/join-auth';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  CapturingHandOff,
  commitMatch,
  KeyFiles,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startInProcessAllocator,
  waitForHandOff,
  type InProcessAllocator,
} from '../support/allocation-harness';

const OLD = 'mp-2026-01';
const NEW = 'mp-2026-07';

/** The same token with its key id relabelled and its MAC kept: what a forger would try. */
function relabel(token: string, keyId: string): string {
  const [claims, mac] = token.split('.') as [string, string];
  const decoded = decodeJoinClaims(Buffer.from(claims, 'base64url'));
  return `${encodeJoinClaims({ ...decoded, keyId }).toString('base64url')}.${mac}`;
}

/**
 * Rotation mid-match, as docs/JOIN-AUTH.md describes it: the new key is published beside the old
 * (the allocator restarts with both, the new one active) while a match signed under the old key is
 * still live. Verifiers holding both keys accept both matches' rosters and tokens; once the old
 * key is retired its tokens are refused, and a token relabelled to another key id never passes.
 * Everything is verified over the roster the API serves to the game server.
 */
describe('join key rotation', () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator | undefined;

  const env = (file: string, active: string) => ({
    JOIN_KEYS_FILE: file,
    JOIN_ACTIVE_KEY_ID: active,
    ALLOCATION_PROVIDER: 'static',
    STATIC_SERVERS: 'gs-a=127.0.0.1:7201,gs-b=127.0.0.1:7202',
    STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
  });

  beforeAll(async () => {
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  async function rosterOfNewMatch(): Promise<RosterResponse> {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const server = await waitForHandOff(handOff, matchId);
    const response = await serverCall(
      api,
      'GET',
      ServerRoutes.roster(server.serverId),
      server.credential,
    );
    expect(response.statusCode).toBe(200);
    return response.json<RosterResponse>();
  }

  it('accepts both keys while both are current, refuses a retired key and a swapped key id', async () => {
    allocator = await startInProcessAllocator(api, env(keys.write('before.json', [OLD]), OLD), {
      handOff,
    });
    const before = await rosterOfNewMatch();
    expect(before.manifest.keyId).toBe(OLD);
    await allocator.close();

    // Publish: the new key beside the old; switch: the allocator signs with the new one.
    allocator = await startInProcessAllocator(
      api,
      env(keys.write('during.json', [OLD, NEW]), NEW),
      { handOff },
    );
    const after = await rosterOfNewMatch();
    expect(after.manifest.keyId).toBe(NEW);

    const now = Date.now();
    const check = (verifier: JoinTokenVerifier, roster: RosterResponse) => ({
      roster: verifier.verifyRoster(
        roster.manifest,
        roster.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken })),
        { serverId: roster.serverId, matchId: roster.matchId, now },
      ),
      tokens: roster.entries.map((e) =>
        verifier.verify(e.joinToken, { serverId: roster.serverId, matchId: roster.matchId, now }),
      ),
    });

    const both = new JoinTokenVerifier(keys.keySet([OLD, NEW]));
    for (const roster of [before, after]) {
      const verdict = check(both, roster);
      expect(verdict.roster.ok).toBe(true);
      expect(verdict.tokens.map((t) => t.ok)).toEqual([true, true]);
    }

    // Retire: verifiers rebuilt without the old key refuse what it signed.
    const retired = new JoinTokenVerifier(keys.keySet([NEW]));
    const old = check(retired, before);
    expect(old.roster).toMatchObject({ ok: false, reason: 'UNKNOWN_KEY' });
    expect(old.tokens.map((t) => (t.ok ? 'ok' : t.reason))).toEqual(['UNKNOWN_KEY', 'UNKNOWN_KEY']);
    expect(check(retired, after).roster.ok).toBe(true);

    // Swapped key id: the new key's MAC presented as the old key's (and the reverse).
    const token = after.entries[0]!.joinToken;
    const swapped = both.verify(relabel(token, OLD), {
      serverId: after.serverId,
      matchId: after.matchId,
      now,
    });
    expect(swapped).toMatchObject({ ok: false, reason: 'KEY_MISMATCH' });
    const back = both.verify(relabel(before.entries[0]!.joinToken, NEW), {
      serverId: before.serverId,
      matchId: before.matchId,
      now,
    });
    expect(back).toMatchObject({ ok: false, reason: 'KEY_MISMATCH' });
    const manifest = both.verifyRoster(
      { ...after.manifest, keyId: OLD },
      after.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken })),
      { serverId: after.serverId, matchId: after.matchId, now },
    );
    expect(manifest).toMatchObject({ ok: false, reason: 'KEY_MISMATCH' });
  });
});
