import { ServerRoutes, SERVER_PROTOCOL_VERSION, type ServerHandOff } from '@matchplane/contracts';
import type { AllocationStep } from '../../apps/allocator/src/allocator.config';
import { AllocationService } from '../../apps/allocator/src/allocation.service';
import type { AllocationStepHook } from '../../apps/allocator/src/allocation-step.hook';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  CapturingHandOff,
  commitMatch,
  countRows,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  startInProcessAllocator,
  ticketStates,
  type InProcessAllocator,
} from '../support/allocation-harness';

const REGISTER = { protocolVersion: SERVER_PROTOCOL_VERSION, imageDigest: 'sha256:test' };
const MATCHES = 24;

/**
 * Holds the runs of the next match to get a server, after their provider answered and before any
 * records an allocation, until `parties` of them got there.
 */
class AllocatedBarrier {
  private target?: { matchId?: string; parties: number; arrived: number; open: () => void };
  private opened = Promise.resolve();

  holdNext(parties: number): void {
    this.opened = new Promise((open) => {
      this.target = { parties, arrived: 0, open };
    });
  }

  readonly hook = {
    reached: async (step: AllocationStep, matchId: string): Promise<void> => {
      const target = this.target;
      if (step !== 'allocated' || !target) return;
      target.matchId ??= matchId;
      if (target.matchId !== matchId) return;
      target.arrived += 1;
      if (target.arrived >= target.parties) target.open();
      await Promise.race([this.opened, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    },
  } as unknown as AllocationStepHook;
}

/**
 * Allocation under concurrency: many matches at once over two allocators (each working on
 * several jobs at a time, and each starting its round-robin over the pool at the same server, so
 * they race for servers), the same match run several times at once (a stalled job taken over
 * while its first run goes on), and a server registering several times at once.
 */
describe('allocation under concurrency', () => {
  const keys = new KeyFiles();
  const handOff = new CapturingHandOff();
  const barrier = new AllocatedBarrier();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  const allocators: InProcessAllocator[] = [];

  beforeAll(async () => {
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    const env = {
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'static',
      // Exactly one server per match of the burst, plus one for each later test.
      STATIC_SERVERS: Array.from({ length: MATCHES + 2 }, (_, i) => `gs-${i}=127.0.0.1:7777`).join(
        ',',
      ),
      STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
      ALLOCATOR_CONCURRENCY: '8',
    };
    for (let i = 0; i < 2; i += 1)
      allocators.push(await startInProcessAllocator(api, env, { handOff, stepHook: barrier.hook }));
  });

  afterAll(async () => {
    for (const allocator of allocators) await allocator.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  it('gives each of many matches committed at once one allocation, one roster and a server of its own', async () => {
    const players = await queuePlayers(api, MATCHES * 2, 'duel');
    const matchIds = await Promise.all(
      Array.from({ length: MATCHES }, (_, i) =>
        commitMatch(api, players.slice(i * 2, i * 2 + 2), 'duel'),
      ),
    );
    const given = await waitFor(
      () => {
        const latest = matchIds
          .map((id) => handOff.latest(id))
          .filter((h): h is ServerHandOff => h !== undefined);
        return Promise.resolve(latest.length === MATCHES ? latest : undefined);
      },
      { timeoutMs: 60_000, what: `${MATCHES} hand-offs` },
    );
    await waitFor(
      async () => {
        const [row] = await api.ds.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM allocations WHERE match_id = ANY($1::uuid[]) AND handed_off_at IS NOT NULL`,
          [matchIds],
        );
        return row?.n === MATCHES ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'every hand-off marked' },
    );

    for (const matchId of matchIds) {
      expect(await countRows(api.ds, 'allocations', matchId)).toBe(1);
      expect(await countRows(api.ds, 'roster_manifests', matchId)).toBe(1);
      expect(await countRows(api.ds, 'assignments', matchId)).toBe(2);
    }
    expect(new Set(given.map((h) => h.serverId)).size).toBe(MATCHES);
    // Every server registers with the credential it was handed last.
    const registered = await Promise.all(
      given.map((h) =>
        serverCall(api, 'POST', ServerRoutes.register(h.serverId), h.credential, REGISTER),
      ),
    );
    expect(registered.map((r) => r.statusCode)).toEqual(matchIds.map(() => 200));
    for (const matchId of matchIds) {
      expect(await matchState(api.ds, matchId)).toMatchObject({
        state: 'ASSIGNMENT_READY',
        revision: 3,
      });
    }
  });

  it('runs of one match at once end with one allocation, one roster and one working credential', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    // Four runs here and the worker's own run of the job: each has found no allocation and got
    // a server of its own before any of them records one.
    barrier.holdNext(5);
    const matchId = await commitMatch(api, players, 'duel');
    const service = allocators[0]!.app.get(AllocationService);
    const runs = await Promise.allSettled(Array.from({ length: 4 }, () => service.run(matchId)));
    for (const run of runs) {
      // A run whose credential another run replaced before it was marked says so and is retried;
      // nothing else may fail.
      if (run.status === 'rejected')
        expect(String(run.reason)).toMatch(/was replaced during its hand-off/);
      else expect(['allocated', 'already-allocated']).toContain(run.value);
    }
    const [row] = await waitFor(
      async () => {
        const rows = await api.ds.query<{ server_id: string }[]>(
          `SELECT server_id FROM allocations WHERE match_id = $1 AND handed_off_at IS NOT NULL`,
          [matchId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      { timeoutMs: 30_000, what: 'the hand-off marked' },
    );
    expect(await countRows(api.ds, 'allocations', matchId)).toBe(1);
    expect(await countRows(api.ds, 'roster_manifests', matchId)).toBe(1);
    expect(await countRows(api.ds, 'assignments', matchId)).toBe(2);
    const handedOff = handOff.handOffs.filter((h) => h.matchId === matchId);
    expect(new Set(handedOff.map((h) => h.serverId))).toEqual(new Set([row!.server_id]));
    // Exactly one of the credentials handed over is the one stored: it registers.
    const outcomes = await Promise.all(
      handedOff.map((h) =>
        serverCall(api, 'GET', ServerRoutes.roster(h.serverId), h.credential).then(
          (r) => r.statusCode,
        ),
      ),
    );
    expect(outcomes.filter((status) => status === 200)).toHaveLength(1);
  });

  it('answers every one of a server registering several times at once, moving the match once', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const given = await waitFor(
      async () => {
        const [row] = await api.ds.query<{ handed_off_at: Date | null }[]>(
          `SELECT handed_off_at FROM allocations WHERE match_id = $1`,
          [matchId],
        );
        return row?.handed_off_at ? handOff.latest(matchId) : undefined;
      },
      { timeoutMs: 30_000, what: 'the hand-off marked' },
    );
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        serverCall(api, 'POST', ServerRoutes.register(given.serverId), given.credential, REGISTER),
      ),
    );
    expect(answers.map((a) => [a.statusCode, a.json()])).toEqual(
      answers.map(() => [
        200,
        { matchId, serverId: given.serverId, state: 'ASSIGNMENT_READY', revision: 3 },
      ]),
    );
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['ASSIGNED', 'ASSIGNED']);
    const events = await api.ds.query<{ revision: string; to: string }[]>(
      `SELECT revision, payload->>'to' AS to FROM outbox
        WHERE aggregate_type = 'match' AND aggregate_id = $1 ORDER BY revision`,
      [matchId],
    );
    expect(events.map((e) => [Number(e.revision), e.to])).toEqual([
      [1, 'ALLOCATING'],
      [2, 'PROCESS_READY'],
      [3, 'ASSIGNMENT_READY'],
    ]);
  });
});
