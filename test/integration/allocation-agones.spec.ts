import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AGONES_MATCH_LABEL,
  AgonesHandOffAnnotations,
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type RosterResponse,
} from '@matchplane/contracts';
import type { AllocationStep } from '../../apps/allocator/src/allocator.config';
import { AgonesProvider } from '../../apps/allocator/src/providers/agones.provider';
import { ServerHealthWatcher } from '../../apps/allocator/src/server-health.watcher';
import type { InProcessDispatcher } from '../support/outbox-fixtures';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import {
  allocationRegion,
  allocationState,
  endAndRelease,
  cancelMatch,
  commitMatch,
  countRows,
  releaseRequests,
  releasesCounted,
  waitForRelease,
  KeyFiles,
  matchState,
  queuePlayers,
  serverCall,
  startDispatcherFor,
  ticketStates,
  startInProcessAllocator,
  type InProcessAllocator,
} from '../support/allocation-harness';

interface FakeGameServer {
  name: string;
  state: 'Ready' | 'Allocated' | 'Unhealthy';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  address: string;
  port: number;
}

interface Selector {
  matchLabels?: Record<string, string>;
  gameServerState?: 'Ready' | 'Allocated';
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      try {
        resolve(body ? JSON.parse(body) : {});
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

/**
 * Answers as the Kubernetes API with Agones installed does, for the calls the provider makes:
 * GameServerAllocation (selectors tried in order, labels and annotations applied to the allocated
 * GameServer), merge-patch and delete of a GameServer.
 */
class FakeAgones {
  readonly servers = new Map<string, FakeGameServer>();
  readonly allocationRequests: unknown[] = [];
  readonly patchContentTypes: string[] = [];
  /** GameServer deletes to answer 500 before obeying again (a Kubernetes API hiccup). */
  failDeletes = 0;
  private server?: Server;

  constructor(
    readonly namespace: string,
    readonly fleet: string,
    count: number,
  ) {
    for (let i = 0; i < count; i += 1) {
      const name = `${fleet}-x${i}`;
      this.servers.set(name, {
        name,
        state: 'Ready',
        labels: { 'agones.dev/fleet': fleet },
        annotations: {},
        address: '10.1.0.' + (i + 1),
        port: 7000 + i,
      });
    }
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      void this.route(request).then(
        ({ status, body }) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        },
        (error: unknown) => {
          response.writeHead(500, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ kind: 'Status', message: String(error) }));
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  allocatedFor(matchId: string): FakeGameServer[] {
    return [...this.servers.values()].filter(
      (s) => s.state === 'Allocated' && s.labels[AGONES_MATCH_LABEL] === matchId,
    );
  }

  private async route(request: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = request.url ?? '';
    const allocations = `/apis/allocation.agones.dev/v1/namespaces/${this.namespace}/gameserverallocations`;
    const gameServer = new RegExp(
      `^/apis/agones.dev/v1/namespaces/${this.namespace}/gameservers/([^/?]+)`,
    ).exec(url);
    if (request.method === 'POST' && url.startsWith(allocations)) {
      const body = (await readJson(request)) as {
        spec: {
          selectors: Selector[];
          metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
        };
      };
      this.allocationRequests.push(body);
      for (const selector of body.spec.selectors) {
        const found = [...this.servers.values()].find(
          (s) =>
            s.state === (selector.gameServerState ?? 'Ready') &&
            Object.entries(selector.matchLabels ?? {}).every(
              ([key, value]) => s.labels[key] === value,
            ),
        );
        if (!found) continue;
        found.state = 'Allocated';
        Object.assign(found.labels, body.spec.metadata?.labels ?? {});
        Object.assign(found.annotations, body.spec.metadata?.annotations ?? {});
        return {
          status: 201,
          body: {
            apiVersion: 'allocation.agones.dev/v1',
            kind: 'GameServerAllocation',
            status: {
              state: 'Allocated',
              gameServerName: found.name,
              address: found.address,
              ports: [{ name: 'default', port: found.port }],
            },
          },
        };
      }
      return {
        status: 201,
        body: { kind: 'GameServerAllocation', status: { state: 'UnAllocated' } },
      };
    }
    if (
      request.method === 'GET' &&
      url.startsWith(`/apis/agones.dev/v1/namespaces/${this.namespace}/gameservers?`)
    ) {
      const selector = new URL(url, 'http://fake').searchParams.get('labelSelector') ?? '';
      const items = [...this.servers.values()]
        .filter((s) => selector === '' || s.labels[selector] !== undefined)
        .map((s) => ({ metadata: { name: s.name, labels: s.labels }, status: { state: s.state } }));
      return { status: 200, body: { kind: 'GameServerList', items } };
    }
    const name = gameServer?.[1];
    const target = name === undefined ? undefined : this.servers.get(name);
    if (name !== undefined && !target)
      return { status: 404, body: { kind: 'Status', message: `gameservers "${name}" not found` } };
    if (request.method === 'PATCH' && target) {
      this.patchContentTypes.push(String(request.headers['content-type']));
      const patch = (await readJson(request)) as {
        metadata?: { annotations?: Record<string, string> };
      };
      Object.assign(target.annotations, patch.metadata?.annotations ?? {});
      return {
        status: 200,
        body: { metadata: { name: target.name, annotations: target.annotations } },
      };
    }
    if (request.method === 'DELETE' && this.failDeletes > 0) {
      this.failDeletes -= 1;
      return { status: 500, body: { kind: 'Status', message: 'etcdserver: request timed out' } };
    }
    if (request.method === 'DELETE' && target && name !== undefined) {
      this.servers.delete(name);
      return { status: 200, body: { kind: 'Status', status: 'Success' } };
    }
    return {
      status: 404,
      body: { kind: 'Status', message: `no route ${request.method ?? ''} ${url}` },
    };
  }
}

/** The GameServer of `cluster` allocated to the match, once it was handed its credential. */
function handedOffIn(cluster: FakeAgones, matchId: string) {
  return waitFor(
    () => {
      const [server] = cluster.allocatedFor(matchId);
      return Promise.resolve(
        server?.annotations[AgonesHandOffAnnotations.CREDENTIAL] ? server : undefined,
      );
    },
    { what: `hand-off of match ${matchId}` },
  );
}

describe(AgonesProvider.name, () => {
  const keys = new KeyFiles();
  const agones = new FakeAgones('mp', 'mp-fleet', 4);
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;
  /** The step after which the next allocation run "crashes" (throws), once. */
  let crashNext: AllocationStep | undefined;
  const crashed: string[] = [];

  beforeAll(async () => {
    const url = await agones.start();
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    allocator = await startInProcessAllocator(
      api,
      {
        JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
        JOIN_ACTIVE_KEY_ID: 'k1',
        ALLOCATION_PROVIDER: 'agones',
        AGONES_API_URL: url,
        AGONES_NAMESPACE: 'mp',
        AGONES_FLEET: 'mp-fleet',
      },
      {
        stepHook: {
          reached: (step: AllocationStep, matchId: string) => {
            if (crashNext !== step) return Promise.resolve();
            crashNext = undefined;
            crashed.push(matchId);
            return Promise.reject(new Error(`simulated crash after ${step}`));
          },
        } as never,
      },
    );
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    await agones.stop();
    keys.remove();
  });

  const handedOff = (matchId: string) => handedOffIn(agones, matchId);

  it('allocates a GameServer from the fleet and hands it its credential as annotations', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const server = await handedOff(matchId);
    expect(server.annotations).toMatchObject({
      [AgonesHandOffAnnotations.MATCH_ID]: matchId,
      [AgonesHandOffAnnotations.API_URL]: 'http://127.0.0.1:3000',
      'matchplane.dev/region': 'eu-west',
    });
    expect(agones.patchContentTypes.at(-1)).toBe('application/merge-patch+json');
    const credential = server.annotations[AgonesHandOffAnnotations.CREDENTIAL]!;
    const roster = await serverCall(api, 'GET', ServerRoutes.roster(server.name), credential);
    expect(roster.statusCode).toBe(200);
    expect(roster.json<RosterResponse>()).toMatchObject({
      serverId: server.name,
      endpoint: `${server.address}:${server.port}`,
    });
    const registered = await serverCall(
      api,
      'POST',
      ServerRoutes.register(server.name),
      credential,
      {
        protocolVersion: SERVER_PROTOCOL_VERSION,
        imageDigest: 'sha256:agones',
      },
    );
    expect(registered.json()).toMatchObject({ state: 'ASSIGNMENT_READY' });
  });

  it('finds the GameServer it already got when a crash came before the endpoint was stored', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const requestsBefore = agones.allocationRequests.length;
    const readyBefore = [...agones.servers.values()].filter((s) => s.state === 'Ready').length;
    // The first run stops right after the provider answered, before the endpoint is stored.
    crashNext = 'allocated';
    const matchId = await commitMatch(api, players, 'duel');
    const server = await handedOff(matchId);
    expect(crashed).toEqual([matchId]);
    // Asked twice, allocated once: the retry's first selector found the labelled server.
    expect(agones.allocationRequests.length - requestsBefore).toBe(2);
    expect(agones.allocatedFor(matchId)).toHaveLength(1);
    expect([...agones.servers.values()].filter((s) => s.state === 'Ready')).toHaveLength(
      readyBefore - 1,
    );
    const [row] = await api.ds.query<{ server_id: string }[]>(
      `SELECT server_id FROM allocations WHERE match_id = $1`,
      [matchId],
    );
    expect(row!.server_id).toBe(server.name);
    expect(await countRows(api.ds, 'roster_manifests', matchId)).toBe(1);
  });

  it('deletes the GameServer of a match that ended without its server when reconciliation asks, asking again after a failed delete', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const server = await handedOff(matchId);
    await cancelMatch(api, matchId);
    const requests = releaseRequests(api);
    try {
      agones.failDeletes = 1;
      expect((await requests.pass()).reconciled).toMatchObject({ allocation_release_requested: 1 });
      await waitFor(
        async () => ((await releasesCounted(allocator, 'failed')) === 1 ? true : undefined),
        { what: 'the failed release to be counted' },
      );
      // Still held: the row stays live, so the next pass asks again.
      expect(agones.servers.has(server.name)).toBe(true);
      expect(await allocationState(api.ds, matchId)).toBe('ALLOCATED');

      expect((await requests.pass()).reconciled).toMatchObject({ allocation_release_requested: 1 });
      await waitForRelease(api, matchId);
      expect(agones.servers.has(server.name)).toBe(false);
      expect(await releasesCounted(allocator, 'released')).toBe(1);
      // Released: nothing left to ask for.
      expect((await requests.pass()).reconciled).toMatchObject({ allocation_release_requested: 0 });
    } finally {
      await requests.close();
    }
  });

  it('fails the match SERVER_LOST when Agones reports its GameServer Unhealthy, leaving healthy ones alone', async () => {
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    const server = await handedOff(matchId);
    const credential = server.annotations[AgonesHandOffAnnotations.CREDENTIAL]!;
    const registered = await serverCall(
      api,
      'POST',
      ServerRoutes.register(server.name),
      credential,
      {
        protocolVersion: SERVER_PROTOCOL_VERSION,
        imageDigest: 'sha256:agones',
      },
    );
    expect(registered.json()).toMatchObject({ state: 'ASSIGNMENT_READY' });
    const healthy = [...agones.servers.values()].filter(
      (s) => s.state === 'Allocated' && s !== server,
    );
    const liveBefore = await api.ds.query<{ id: string; state: string }[]>(
      `SELECT id, state FROM matches WHERE state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED') AND id <> $1 ORDER BY id`,
      [matchId],
    );
    expect(healthy.length).toBeGreaterThan(0);

    // Agones' health check (SDK pings) marks it; the allocator's watcher polls (every 2 s).
    server.state = 'Unhealthy';
    await waitFor(
      async () => ((await matchState(api.ds, matchId)).state === 'FAILED' ? true : undefined),
      { timeoutMs: 15_000, what: 'the match of the Unhealthy GameServer to fail' },
    );
    expect(await matchState(api.ds, matchId)).toMatchObject({ failure_reason: 'SERVER_LOST' });
    expect(await ticketStates(api.ds, matchId)).toEqual(
      Object.fromEntries(players.map((p) => [p.playerId, 'FAILED'])),
    );
    // Once more changes nothing; healthy servers' matches are untouched.
    expect(await allocator.app.get(ServerHealthWatcher).check()).toEqual([]);
    expect(
      await api.ds.query(
        `SELECT id, state FROM matches WHERE state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED') AND id <> $1 ORDER BY id`,
        [matchId],
      ),
    ).toEqual(liveBefore);
    // Its players queue again at once; the GameServer is deleted through the release path.
    for (const player of players)
      expect((await api.enqueue(player.token, 'duel')).statusCode).toBe(201);
    const requests = releaseRequests(api);
    try {
      expect((await requests.pass()).reconciled).toMatchObject({ allocation_release_requested: 1 });
      await waitForRelease(api, matchId);
      expect(agones.servers.has(server.name)).toBe(false);
    } finally {
      await requests.close();
    }
  });

  it('fails the match with ALLOCATION_FAILED when the fleet has no Ready server', async () => {
    for (const server of agones.servers.values()) server.state = 'Allocated';
    const players = await queuePlayers(api, 2, 'duel');
    const matchId = await commitMatch(api, players, 'duel');
    await waitFor(
      async () => ((await matchState(api.ds, matchId)).state === 'FAILED' ? true : undefined),
      {
        timeoutMs: 30_000,
        what: 'the match to fail',
      },
    );
    expect((await matchState(api.ds, matchId)).failure_reason).toBe('ALLOCATION_FAILED');
  });
});

describe(`${AgonesProvider.name} by region`, () => {
  const keys = new KeyFiles();
  // Two clusters: eu-west's Fleet in the default one (AGONES_API_URL), us-east's in its own.
  const euCluster = new FakeAgones('mp', 'fleet-eu', 1);
  const usCluster = new FakeAgones('mp', 'fleet-us', 2);
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let allocator: InProcessAllocator;

  beforeAll(async () => {
    const euUrl = await euCluster.start();
    const usUrl = await usCluster.start();
    api = await startPlayerApi();
    dispatcher = await startDispatcherFor(api);
    allocator = await startInProcessAllocator(api, {
      JOIN_KEYS_FILE: keys.write('keys.json', ['k1']),
      JOIN_ACTIVE_KEY_ID: 'k1',
      ALLOCATION_PROVIDER: 'agones',
      AGONES_API_URL: euUrl,
      AGONES_NAMESPACE: 'mp',
      AGONES_FLEETS_BY_REGION: 'eu-west=fleet-eu;us-east=fleet-us',
      AGONES_API_URLS_BY_REGION: `us-east=${usUrl}`,
    });
  });

  afterAll(async () => {
    await allocator?.close();
    await dispatcher?.close();
    await api?.close();
    await euCluster.stop();
    await usCluster.stop();
    keys.remove();
  });

  const allocatedRegion = (matchId: string) => allocationRegion(api.ds, matchId);

  it("allocates from the Fleet of the match's region, in that region's cluster, and releases there", async () => {
    const players = await queuePlayers(api, 2, 'duel', { 'us-east': 0 });
    const matchId = await commitMatch(api, players, 'duel', undefined, 'us-east');
    const server = await handedOffIn(usCluster, matchId);
    expect(server.labels['agones.dev/fleet']).toBe('fleet-us');
    expect(server.annotations).toMatchObject({
      [AgonesHandOffAnnotations.MATCH_ID]: matchId,
      'matchplane.dev/region': 'us-east',
    });
    expect(euCluster.allocationRequests).toHaveLength(0);
    expect(await allocatedRegion(matchId)).toBe('us-east');

    // Reconciliation's release reaches the cluster the server runs in.
    await endAndRelease(api, matchId);
    expect(usCluster.servers.has(server.name)).toBe(false);
  });

  it("falls back to the nearest region's Fleet when the match's own Fleet has no Ready server", async () => {
    const first = await queuePlayers(api, 2, 'duel', { 'eu-west': 0 });
    const firstMatch = await commitMatch(api, first, 'duel', undefined, 'eu-west');
    expect((await handedOffIn(euCluster, firstMatch)).labels['agones.dev/fleet']).toBe('fleet-eu');
    expect(await allocatedRegion(firstMatch)).toBe('eu-west');

    // fleet-eu's only server is taken: the next eu-west match goes to us-east (measured ~20 ms).
    const players = await queuePlayers(api, 2, 'duel', { 'eu-west': 0, 'us-east': 20 });
    const matchId = await commitMatch(api, players, 'duel', undefined, 'eu-west');
    const server = await handedOffIn(usCluster, matchId);
    expect(server.annotations['matchplane.dev/region']).toBe('us-east');
    expect(euCluster.allocatedFor(matchId)).toHaveLength(0);
    expect(await allocatedRegion(matchId)).toBe('us-east');
  });
});
