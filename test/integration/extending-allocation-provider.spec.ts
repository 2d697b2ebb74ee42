import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { loadConfig } from '@matchplane/config';
import { AllocatorConfig } from '../../apps/allocator/src/allocator.config';
import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type RosterResponse,
  type ServerHandOff,
} from '@matchplane/contracts';
import { JoinTokenVerifier } from '@matchplane/join-auth';
import { AllocatorModule } from '../../apps/allocator/src/allocator.module';
import { AllocationProvider } from '../../apps/allocator/src/providers/allocation.provider';
import {
  StudioFleetModule,
  StudioFleetProvider,
  type StudioServer,
} from '../../apps/studio-example/src/studio-fleet.module';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';
import {
  commitMatch,
  KeyFiles,
  queuePlayers,
  REGION,
  serverCall,
  startDispatcherFor,
} from '../support/allocation-harness';

const FLEET: readonly StudioServer[] = [
  { id: 'studio-eu-1', region: REGION, endpoint: '127.0.0.1:7801', rack: 'ams-a' },
  { id: 'studio-us-1', region: 'us-east', endpoint: '127.0.0.1:7802', rack: 'iad-b' },
];

/** The studio's fleet agent, as the servers see it: the last hand-off each one received. */
class FleetAgent {
  readonly told: ServerHandOff[] = [];
  readonly resets: string[] = [];

  latest(matchId: string): ServerHandOff | undefined {
    return [...this.told].reverse().find((handOff) => handOff.matchId === matchId);
  }
}

const SILENT: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** docs/EXTENDING.md "A custom allocation provider": the example provider in the real allocator. */
describe('extending: a custom allocation provider', () => {
  const keys = new KeyFiles();
  const agent = new FleetAgent();
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: INestApplicationContext;

  beforeAll(async () => {
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    const config = loadConfig(AllocatorConfig, {
      ...api.db.env,
      REDIS_KEY_PREFIX: api.prefix,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
      JOIN_KEYS_FILE: keys.write('keys.json', ['studio-2026-01']),
      JOIN_ACTIVE_KEY_ID: 'studio-2026-01',
      // A match waiting for a busy server keeps retrying for a few seconds (second test).
      ALLOCATION_MAX_ATTEMPTS: '40',
      ALLOCATION_RETRY_BASE_MS: '50',
      ALLOCATION_RETRY_CAP_MS: '200',
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        AllocatorModule.forRoot(config, {
          provider: StudioFleetProvider,
          imports: [
            StudioFleetModule.register({
              servers: FLEET,
              tell: (handOff) => {
                agent.told.push(handOff);
                return Promise.resolve();
              },
              reset: (serverId) => {
                agent.resets.push(serverId);
                return Promise.resolve();
              },
            }),
          ],
        }),
      ],
    })
      .setLogger(SILENT)
      .compile();
    allocator = await moduleRef.init();
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    keys.remove();
  });

  const handOffOf = (matchId: string) =>
    waitFor(() => Promise.resolve(agent.latest(matchId)), {
      intervalMs: 25,
      what: `hand-off of match ${matchId}`,
    });

  it('serves a match from the studio fleet: its server reads the signed roster with the credential it was handed', async () => {
    expect(allocator.get(AllocationProvider)).toBeInstanceOf(StudioFleetProvider);
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');

    const given = await handOffOf(matchId);
    // The match's region picks the rack: never the us-east server for an eu-west match.
    expect(given).toMatchObject({
      serverId: 'studio-eu-1',
      matchId,
      endpoint: '127.0.0.1:7801',
      apiUrl: 'http://127.0.0.1:3000',
      credential: expect.any(String),
    });
    const [allocation] = await api.ds.query<
      { provider: string; server_id: string; provider_ref: unknown; state: string }[]
    >(`SELECT provider, server_id, provider_ref, state FROM allocations WHERE match_id = $1`, [
      matchId,
    ]);
    expect(allocation).toEqual({
      provider: 'studio',
      server_id: 'studio-eu-1',
      provider_ref: { rack: 'ams-a' },
      state: 'ALLOCATED',
    });

    const roster = await serverCall(
      api,
      'GET',
      ServerRoutes.roster('studio-eu-1'),
      given.credential,
    );
    expect(roster.statusCode).toBe(200);
    const body = roster.json<RosterResponse>();
    expect(body).toMatchObject({ matchId, serverId: 'studio-eu-1', endpoint: '127.0.0.1:7801' });
    expect(body.entries.map((entry) => entry.playerId).sort()).toEqual(
      players.map((player) => player.playerId).sort(),
    );
    // What the studio server does before it registers: verify the manifest and every token.
    const verifier = new JoinTokenVerifier(keys.keySet(['studio-2026-01']));
    const now = Date.now();
    const context = { serverId: 'studio-eu-1', matchId, now };
    const entries = body.entries.map((entry) => ({
      playerId: entry.playerId,
      token: entry.joinToken,
    }));
    expect(verifier.verifyRoster(body.manifest, entries, context)).toMatchObject({ ok: true });
    for (const entry of body.entries) {
      expect(verifier.verify(entry.joinToken, context)).toMatchObject({
        ok: true,
        claims: { playerId: entry.playerId, endpoint: '127.0.0.1:7801' },
      });
    }
    // The credential is bound to its server: another server id is refused.
    const other = await serverCall(
      api,
      'GET',
      ServerRoutes.roster('studio-us-1'),
      given.credential,
    );
    expect(other.statusCode).toBe(403);

    await play(
      given,
      players.map((player) => player.playerId),
    );
    expect(await allocationState(matchId)).toBe('RELEASED');
  });

  it("holds a match while its region's studio server is busy and gives it that server once the match before reported its result", async () => {
    const first = await queuePlayers(api, 2, 'duel');
    const firstMatch = await commitMatch(api, first, 'duel');
    const firstHandOff = await handOffOf(firstMatch);
    const secondMatch = await commitMatch(api, await queuePlayers(api, 2, 'duel'), 'duel');
    // The free us-east server does not serve an eu-west match: the second one waits (retrying).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(agent.latest(secondMatch)).toBeUndefined();
    expect(await allocationState(secondMatch)).toBeUndefined();

    await play(
      firstHandOff,
      first.map((player) => player.playerId),
    );
    const second = await handOffOf(secondMatch);
    expect(second).toMatchObject({ serverId: 'studio-eu-1', endpoint: '127.0.0.1:7801' });
    expect(second.credential).not.toBe(firstHandOff.credential);
    // The first match's credential died with its allocation: it cannot read the new roster.
    const stale = await serverCall(
      api,
      'GET',
      ServerRoutes.roster('studio-eu-1'),
      firstHandOff.credential,
    );
    expect([stale.statusCode, stale.json().code]).toEqual([401, 'ALLOCATION_ENDED']);
    const roster = await serverCall(
      api,
      'GET',
      ServerRoutes.roster('studio-eu-1'),
      second.credential,
    );
    expect(roster.json<RosterResponse>().matchId).toBe(secondMatch);
    // Nothing was given up on, so the fleet never had to reset a server.
    expect(agent.resets).toEqual([]);
  });

  /** What the studio server does with its match: register, report who connected, the result. */
  async function play(handOff: ServerHandOff, playerIds: readonly string[]): Promise<void> {
    const { serverId, credential } = handOff;
    const registered = await serverCall(api, 'POST', ServerRoutes.register(serverId), credential, {
      protocolVersion: SERVER_PROTOCOL_VERSION,
      imageDigest: 'sha256:studio-server',
    });
    expect(registered.json()).toMatchObject({ state: 'ASSIGNMENT_READY' });
    const connected = await serverCall(
      api,
      'POST',
      ServerRoutes.initialConnect(serverId),
      credential,
      {
        connectedPlayerIds: playerIds,
      },
    );
    expect(connected.json()).toMatchObject({ state: 'IN_PROGRESS' });
    const result = await serverCall(api, 'POST', ServerRoutes.result(serverId), credential, {
      outcome: 'COMPLETED',
    });
    expect(result.json()).toMatchObject({ state: 'COMPLETED' });
  }

  async function allocationState(matchId: string): Promise<string | undefined> {
    const [row] = await api.ds.query<{ state: string }[]>(
      `SELECT state FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    return row?.state;
  }
});
