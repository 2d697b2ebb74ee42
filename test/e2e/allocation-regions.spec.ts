import type { ServerHandOff } from '@matchplane/contracts';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, startApp, waitFor, type RunningApp } from '../support/processes';
import {
  allocationRegion,
  commitMatch,
  HandOffSink,
  KeyFiles,
  queuePlayers,
  startDispatcherFor,
} from '../support/allocation-harness';

/**
 * The allocator as a process, with the static provider configured per region: each match is
 * hosted in its own region, a full region falls back to the next-best one for its players (by
 * the RTT the API measured), and the allocator's /metrics counts the fallback.
 */
describe('allocator process by region', () => {
  const keys = new KeyFiles();
  const sink = new HandOffSink();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: RunningApp | undefined;
  let healthPort: number;

  beforeAll(async () => {
    const sinkPort = await sink.start();
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    healthPort = await freePort();
    allocator = startApp('allocator', {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(healthPort),
      LOG_LEVEL: 'warn',
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'static',
      // One server in eu-west, two in us-east.
      STATIC_SERVERS_BY_REGION: `eu-west=eu-1=127.0.0.1:${sinkPort};us-east=us-1=127.0.0.1:${sinkPort},us-2=127.0.0.1:${sinkPort}`,
      STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff/{id}',
      ALLOCATION_RETRY_BASE_MS: '50',
    });
  });

  afterAll(async () => {
    await allocator?.stop('SIGTERM');
    await dispatcher?.close();
    await api?.close();
    await sink.stop();
    keys.remove();
  });

  function handOff(matchId: string): Promise<ServerHandOff> {
    return waitFor(() => Promise.resolve(sink.of(matchId)[0]), {
      timeoutMs: 30_000,
      what: `hand-off of match ${matchId}`,
    });
  }

  it("hosts a match in its region, and the next one of a full region in its players' nearest", async () => {
    const usPlayers = await queuePlayers(api, 2, 'duel', { 'us-east': 0 });
    const usMatch = await commitMatch(api, usPlayers, 'duel', undefined, 'us-east');
    const euPlayers = await queuePlayers(api, 2, 'duel', { 'eu-west': 0 });
    const euMatch = await commitMatch(api, euPlayers, 'duel', undefined, 'eu-west');
    expect(['us-1', 'us-2']).toContain((await handOff(usMatch)).serverId);
    expect((await handOff(euMatch)).serverId).toBe('eu-1');
    expect(await allocationRegion(api.ds, usMatch)).toBe('us-east');
    expect(await allocationRegion(api.ds, euMatch)).toBe('eu-west');

    // eu-1 is taken: the next eu-west match goes to us-east, measured ~20 ms away.
    const players = await queuePlayers(api, 2, 'duel', { 'eu-west': 0, 'us-east': 20 });
    const matchId = await commitMatch(api, players, 'duel', undefined, 'eu-west');
    const given = await handOff(matchId);
    expect(['us-1', 'us-2']).toContain(given.serverId);
    expect(given.serverId).not.toBe((await handOff(usMatch)).serverId);
    expect(await allocationRegion(api.ds, matchId)).toBe('us-east');

    const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    expect(metrics).toMatch(
      /^allocation_region_fallbacks_total\{[^}]*from="eu-west",to="us-east"[^}]*\} 1$/m,
    );
  });
});
