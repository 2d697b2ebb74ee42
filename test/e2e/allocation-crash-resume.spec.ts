import { ALLOCATION_STEPS, type AllocationStep } from '../../apps/allocator/src/allocator.config';
import { ServerRoutes, type RosterResponse } from '@matchplane/contracts';
import { JoinTokenVerifier } from '@matchplane/join-auth';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, startApp, waitFor, type RunningApp } from '../support/processes';
import {
  commitMatch,
  countRows,
  HandOffSink,
  KeyFiles,
  queuePlayers,
  serverCall,
  startDispatcherFor,
} from '../support/allocation-harness';

interface AllocationRow {
  server_id: string;
  credential_hash: Buffer | null;
  handed_off_at: Date | null;
}

interface ManifestRow {
  signature: Buffer;
}

/**
 * The allocator process is killed right after each step in turn (ALLOCATOR_EXIT_AFTER_STEP makes
 * it exit on the spot) and a fresh allocator process takes the stalled job over: it resumes
 * without a second allocation, publishes exactly one roster, and the server ends up holding a
 * credential that works.
 */
describe('allocator crash recovery', () => {
  const keys = new KeyFiles();
  const sink = new HandOffSink();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let env: Record<string, string>;
  const running: RunningApp[] = [];

  beforeAll(async () => {
    const sinkPort = await sink.start();
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    env = {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      HEALTH_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'static',
      STATIC_SERVERS: Array.from({ length: 8 }, (_, i) => `gs-${i}=127.0.0.1:${sinkPort}`).join(
        ',',
      ),
      STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff/{id}',
      // A killed allocator's job is taken over after about this long.
      ALLOCATION_LOCK_MS: '2000',
      ALLOCATION_RETRY_BASE_MS: '50',
    };
  });

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop('SIGKILL')));
    await dispatcher?.close();
    await api?.close();
    await sink.stop();
    keys.remove();
  });

  async function allocator(extra: Record<string, string> = {}): Promise<RunningApp> {
    const app = startApp('allocator', { ...env, HEALTH_PORT: String(await freePort()), ...extra });
    running.push(app);
    return app;
  }

  async function allocation(matchId: string): Promise<AllocationRow | undefined> {
    const [row] = await api.ds.query<AllocationRow[]>(
      `SELECT server_id, credential_hash, handed_off_at FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    return row;
  }

  async function signature(matchId: string): Promise<string | undefined> {
    const [row] = await api.ds.query<ManifestRow[]>(
      `SELECT signature FROM roster_manifests WHERE match_id = $1`,
      [matchId],
    );
    return row?.signature.toString('base64url');
  }

  it.each(ALLOCATION_STEPS.map((step) => [step]))(
    'resumes after a crash right after %s',
    async (step: AllocationStep) => {
      const players = await queuePlayers(api, 2, 'duel');
      const matchId = await commitMatch(api, players, 'duel');

      const crashing = await allocator({ ALLOCATOR_EXIT_AFTER_STEP: step });
      expect(await crashing.exited).toBe(75);
      const before = await allocation(matchId);
      const signedBefore = await signature(matchId);
      const handOffsBefore = sink.of(matchId).length;
      const stepIndex = ALLOCATION_STEPS.indexOf(step);
      // What the crash left behind, step by step.
      expect(before !== undefined).toBe(stepIndex >= ALLOCATION_STEPS.indexOf('persisted'));
      // The allocation is persisted with its first credential's hash, in one statement.
      expect(before?.credential_hash != null).toBe(
        stepIndex >= ALLOCATION_STEPS.indexOf('persisted'),
      );
      expect(signedBefore !== undefined).toBe(stepIndex >= ALLOCATION_STEPS.indexOf('published'));
      expect(handOffsBefore).toBe(step === 'handed-off' ? 1 : 0);

      const resumed = await allocator();
      const after = await waitFor(
        async () => {
          const row = await allocation(matchId);
          return row?.handed_off_at ? row : undefined;
        },
        { timeoutMs: 30_000, what: `match ${matchId} handed off after the crash` },
      );
      if (step === 'handed-off') {
        // Already complete: the resumed run only acknowledges it (give it time to do anything wrong).
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      }
      await resumed.stop();

      expect(await countRows(api.ds, 'allocations', matchId)).toBe(1);
      if (before) expect(after.server_id).toBe(before.server_id);
      expect(await countRows(api.ds, 'roster_manifests', matchId)).toBe(1);
      expect(await countRows(api.ds, 'assignments', matchId)).toBe(players.length);
      if (signedBefore) expect(await signature(matchId)).toBe(signedBefore);
      expect(sink.of(matchId)).toHaveLength(1);

      // The server's credential is the one last handed over, and it reads a roster that verifies.
      const given = sink.of(matchId).at(-1)!;
      expect(given.serverId).toBe(after.server_id);
      const roster = await serverCall(
        api,
        'GET',
        ServerRoutes.roster(given.serverId),
        given.credential,
      );
      expect(roster.statusCode).toBe(200);
      const body = roster.json<RosterResponse>();
      const verdict = new JoinTokenVerifier(keys.keySet(['k1'])).verifyRoster(
        body.manifest,
        body.entries.map((e) => ({ playerId: e.playerId, token: e.joinToken })),
        { serverId: given.serverId, matchId, now: Date.now() },
      );
      expect(verdict.ok).toBe(true);
    },
  );
});
