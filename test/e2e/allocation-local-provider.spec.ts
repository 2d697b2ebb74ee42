import { LocalProvider } from '../../apps/allocator/src/providers/local.provider';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { appEntry, waitFor } from '../support/processes';
import {
  commitMatch,
  KeyFiles,
  listenOnLoopback,
  matchEventPayloads,
  matchState,
  queuePlayers,
  startDispatcherFor,
  startInProcessAllocator,
  ticketStates,
  type InProcessAllocator,
} from '../support/allocation-harness';

interface LocalAllocationRow {
  server_id: string;
  endpoint: string;
  state: string;
  region: string | null;
  provider_ref: { port?: number; pid?: number; region?: string };
  server_image_digest: string | null;
  registered_at: Date | null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The local provider launches the reference game server (dist/apps/game-server) as a child on a
 * free loopback port with its identity, credential and config in the GameServerEnv variables. The
 * real server fetches and verifies its roster, registers (ASSIGNMENT_READY), and, with nobody
 * connecting by its deadline, reports initial-connect: the match fails with NO_SHOW, the server
 * exits by itself and its allocation is released.
 */
describe(LocalProvider.name, () => {
  const keys = new KeyFiles();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    api = await startPlayerApi();
    const apiUrl = await listenOnLoopback(api);
    dispatcher = await startDispatcherFor(api);
    allocator = await startInProcessAllocator(api, {
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1', 'k0']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'local',
      ALLOCATOR_API_URL: apiUrl,
      LOCAL_SERVER_ENTRY: appEntry('game-server'),
      LOCAL_SERVER_OUTPUT: 'ignore',
      LOCAL_SERVER_ENV: 'CONNECT_DEADLINE_MS=1500,GAME_SERVER_IMAGE_DIGEST=sha256:local-e2e',
      // Servers are launched for these regions only; ap-southeast has none.
      LOCAL_SERVER_REGIONS: 'eu-west,us-east',
    });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  function registration(matchId: string): Promise<LocalAllocationRow> {
    return waitFor(
      async () => {
        const [row] = await api.ds.query<LocalAllocationRow[]>(
          `SELECT server_id, endpoint, state, region, provider_ref, server_image_digest, registered_at FROM allocations WHERE match_id = $1`,
          [matchId],
        );
        return row?.registered_at ? row : undefined;
      },
      { timeoutMs: 30_000, what: 'the game server to register' },
    );
  }

  /** The server region the match's events carry, revision by revision. */
  async function eventServerRegions(matchId: string): Promise<(string | undefined)[]> {
    return (await matchEventPayloads(api.ds, matchId)).map((payload) => payload.serverRegion);
  }

  it("launches a match's server labelled with the match's region, and the registered match carries it", async () => {
    const players = await queuePlayers(api, 2, 'duel', { 'us-east': 0 });
    const matchId = await commitMatch(api, players, 'duel', undefined, 'us-east');
    const registered = await registration(matchId);
    expect(registered).toMatchObject({ region: 'us-east', provider_ref: { region: 'us-east' } });
    expect((await eventServerRegions(matchId)).slice(0, 3)).toEqual([
      undefined,
      'us-east',
      'us-east',
    ]);
  });

  it('launches the server of a match formed for a region it has none in, in the nearest region it serves', async () => {
    const players = await queuePlayers(api, 2, 'duel', {
      'ap-southeast': 0,
      'us-east': 80,
      'eu-west': 20,
    });
    const matchId = await commitMatch(api, players, 'duel', undefined, 'ap-southeast');
    const registered = await registration(matchId);
    expect(registered).toMatchObject({ region: 'eu-west', provider_ref: { region: 'eu-west' } });
    expect((await eventServerRegions(matchId)).slice(0, 3)).toEqual([
      undefined,
      'eu-west',
      'eu-west',
    ]);
  });

  it('runs a match on a launched game server that registers itself', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');

    const registered = await registration(matchId);
    expect(registered).toMatchObject({
      server_id: `local-${matchId}`,
      endpoint: `127.0.0.1:${registered.provider_ref.port}`,
      server_image_digest: 'sha256:local-e2e',
    });
    const pid = registered.provider_ref.pid!;
    expect(alive(pid)).toBe(true);
    expect(['ASSIGNMENT_READY', 'FAILED']).toContain((await matchState(api.ds, matchId)).state);

    // Nobody connects: at its deadline the server reports it, the match fails and the server exits.
    const ended = await waitFor(
      async () => {
        const state = await matchState(api.ds, matchId);
        return state.state === 'FAILED' ? state : undefined;
      },
      { timeoutMs: 30_000, what: 'the match to end' },
    );
    expect(ended.failure_reason).toBe('NO_SHOW');
    expect(Object.values(await ticketStates(api.ds, matchId))).toEqual(['FAILED', 'FAILED']);
    const [allocation] = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    expect(allocation!.state).toBe('RELEASED');
    await waitFor(() => Promise.resolve(alive(pid) ? undefined : true), {
      timeoutMs: 15_000,
      what: 'the game server to exit',
    });
  });
});
