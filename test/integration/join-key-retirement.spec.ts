import { RosterStore } from '@matchplane/allocation';
import { JoinTokenSigner } from '@matchplane/join-auth';
import { MetricsRegistry } from '@matchplane/observability';
import { joinKeyStatuses } from '../../apps/allocator/src/join-key-retirement';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import {
  CapturingHandOff,
  commitMatch,
  endAndRelease,
  KeyFiles,
  queuePlayers,
  startDispatcherFor,
  startInProcessAllocator,
  waitForHandOff,
  type InProcessAllocator,
} from '../support/allocation-harness';

const OLD = 'mp-2026-01';
const NEW = 'mp-2026-07';

/**
 * When can a rotated-out join key leave the key set (docs/JOIN-AUTH.md, "Key rotation")? Matches
 * allocated through the real allocator under the old key and then the new one; the old key is
 * retirable only once its match's allocation is released and its last token has expired.
 */
describe('join key retirement', () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator | undefined;

  const env = (file: string, active: string) => ({
    JOIN_KEYS_FILE: file,
    JOIN_ACTIVE_KEY_ID: active,
    ALLOCATION_PROVIDER: 'static',
    STATIC_SERVERS: 'gs-a=127.0.0.1:7301,gs-b=127.0.0.1:7302',
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

  async function allocatedMatch(): Promise<string> {
    const matchId = await commitMatch(api, await queuePlayers(api, 2, 'duel'), 'duel');
    await waitForHandOff(handOff, matchId);
    return matchId;
  }

  async function gauge(name: string, keyId: string): Promise<number | undefined> {
    const metric = allocator?.app.get(MetricsRegistry).getSingleMetric(name);
    return (await metric?.get())?.values.find((value) => value.labels.key_id === keyId)?.value;
  }

  it('keeps the old key while a live roster or an unexpired token names it, then says it can go', async () => {
    allocator = await startInProcessAllocator(api, env(keys.write('old.json', [OLD]), OLD), {
      handOff,
    });
    const oldMatch = await allocatedMatch();
    await allocator.close();
    allocator = await startInProcessAllocator(api, env(keys.write('both.json', [OLD, NEW]), NEW), {
      handOff,
    });
    await allocatedMatch();

    const rosters = allocator.app.get(RosterStore);
    const signer = allocator.app.get(JoinTokenSigner);
    const statusAt = async (now: Date, held = signer.heldKeyIds()) =>
      joinKeyStatuses(await rosters.joinKeyUsage(api.ds.manager, now), held, signer.activeKeyId);

    const live = await statusAt(new Date());
    expect(live).toEqual([
      expect.objectContaining({
        keyId: OLD,
        held: true,
        active: false,
        unexpiredTokens: 2,
        liveRosters: 1,
        retirable: false,
      }),
      expect.objectContaining({
        keyId: NEW,
        held: true,
        active: true,
        unexpiredTokens: 2,
        liveRosters: 1,
        retirable: false,
      }),
    ]);
    // The allocator exports the same, read when scraped.
    expect(await gauge('join_key_unexpired_tokens', OLD)).toBe(2);
    expect(await gauge('join_key_live_rosters', OLD)).toBe(1);
    expect(await gauge('join_key_retirable', OLD)).toBe(0);
    // Removed too early: the old match's players could not join.
    const removed = await statusAt(new Date(), [NEW]);
    expect(removed.find((status) => status.keyId === OLD)).toMatchObject({
      held: false,
      removedWhileInUse: true,
      retirable: false,
    });

    // The old match ends and its server is released: its tokens are still unexpired.
    await endAndRelease(api, oldMatch);
    const released = (await statusAt(new Date())).find((status) => status.keyId === OLD);
    expect(released).toMatchObject({ liveRosters: 0, unexpiredTokens: 2, retirable: false });

    // Once its last token has expired, nothing names the old key: it can leave the key set.
    const lastExpiry = new Date(released?.lastTokenExpiresAt as string);
    const after = await statusAt(new Date(lastExpiry.getTime() + 1));
    expect(after.find((status) => status.keyId === OLD)).toMatchObject({
      unexpiredTokens: 0,
      liveRosters: 0,
      retirable: true,
    });
    // The active key is never retirable, even with nothing live.
    expect(after.find((status) => status.keyId === NEW)).toMatchObject({
      active: true,
      retirable: false,
    });
  });
});
