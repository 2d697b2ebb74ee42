import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from '../support/journey';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  CapturingHandOff,
  cancelMatch,
  commitMatch,
  endAndRelease,
  KeyFiles,
  queuePlayers,
  releaseRequests,
  releasesCounted,
  startDispatcherFor,
  startInProcessAllocator,
  waitForHandOff,
  waitForRelease,
  type InProcessAllocator,
} from '../support/allocation-harness';

/*
 * A match that ends without its server reporting (cancelled, or failed by reconciliation) keeps its
 * allocation live; reconciliation asks the allocator to release it, and the allocator's provider
 * gives the server back. (Agones: allocation-agones.spec.ts.)
 */
describe('Release of an ended match’s server at its provider', () => {
  const keys = new KeyFiles();
  afterAll(() => keys.remove());

  describe('local provider', () => {
    let api: PlayerApi;
    let dispatcher: InProcessDispatcher;
    let allocator: InProcessAllocator;

    beforeAll(async () => {
      // A stand-in game server: it runs until it is told to stop.
      const entry = path.join(keys.dir, 'idle-server.js');
      writeFileSync(entry, 'setInterval(() => undefined, 1000);\n');
      api = await startPlayerApi();
      dispatcher = await startDispatcherFor(api);
      allocator = await startInProcessAllocator(api, {
        JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
        JOIN_ACTIVE_KEY_ID: 'k1',
        ALLOCATION_PROVIDER: 'local',
        LOCAL_SERVER_ENTRY: entry,
        LOCAL_SERVER_OUTPUT: 'ignore',
      });
    });

    afterAll(async () => {
      await allocator?.close();
      await dispatcher?.close();
      await api?.close();
    });

    it('stops the launched process, and a second request finds nothing left to do', async () => {
      const players = await queuePlayers(api, 2, 'duel');
      const matchId = await commitMatch(api, players, 'duel');
      const pid = await waitFor(
        async () => {
          const [row] = await api.ds.query<{ pid?: number }[]>(
            `SELECT (provider_ref->>'pid')::int AS pid FROM allocations WHERE match_id = $1`,
            [matchId],
          );
          return typeof row?.pid === 'number' ? row.pid : undefined;
        },
        { what: 'the game server process to be launched' },
      );
      expect(processAlive(pid)).toBe(true);

      await cancelMatch(api, matchId);
      const requests = releaseRequests(api);
      try {
        expect((await requests.pass()).reconciled).toMatchObject({
          allocation_release_requested: 1,
        });
        await waitForRelease(api, matchId);
        await waitFor(() => Promise.resolve(processAlive(pid) ? undefined : true), {
          what: `process ${pid} to exit`,
        });
        expect(await releasesCounted(allocator, 'released')).toBe(1);
        expect((await requests.pass()).reconciled).toMatchObject({
          allocation_release_requested: 0,
        });
      } finally {
        await requests.close();
      }
    });
  });

  describe('static provider', () => {
    const handOffs = new CapturingHandOff();
    let api: PlayerApi;
    let dispatcher: InProcessDispatcher;
    let allocator: InProcessAllocator;

    beforeAll(async () => {
      api = await startPlayerApi();
      dispatcher = await startDispatcherFor(api);
      allocator = await startInProcessAllocator(
        api,
        {
          JOIN_KEYS_FILE: keys.write('static-keys.json', ['k1']),
          JOIN_ACTIVE_KEY_ID: 'k1',
          ALLOCATION_PROVIDER: 'static',
          STATIC_SERVERS: 'only=127.0.0.1:7001',
          STATIC_HANDOFF_URL: 'http://127.0.0.1:9/{id}',
        },
        { handOff: handOffs },
      );
    });

    afterAll(async () => {
      await allocator?.close();
      await dispatcher?.close();
      await api?.close();
    });

    it('returns the pool’s only server, which the next match then gets', async () => {
      const first = await commitMatch(api, await queuePlayers(api, 2, 'duel'), 'duel');
      expect((await waitForHandOff(handOffs, first)).serverId).toBe('only');
      await endAndRelease(api, first);
      const second = await commitMatch(api, await queuePlayers(api, 2, 'duel'), 'duel');
      expect((await waitForHandOff(handOffs, second)).serverId).toBe('only');
    });
  });
});
