import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { NotificationCloseCode } from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { NotificationFanoutListener } from '../../apps/api/src/notifications/notification-fanout.listener';
import {
  dispatcherEnv,
  outboxRows,
  startInProcessDispatcher,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { MatchDriver, TestSocket, listen, notificationsUrl } from '../support/notification-clients';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';
import { testRedis } from '../support/redis';
import { testServices } from '../support/test-env';

/**
 * Redis pub/sub keeps nothing for a subscriber that is not there. The API reaches Redis through a
 * TCP proxy the test opens and cuts, while the dispatcher reaches it directly: events published
 * while the API is cut off must still reach its sockets, from history, once it is back.
 */
describe(NotificationFanoutListener.name, () => {
  let proxy: RedisProxy;
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let matches: MatchDriver;
  let url: string;

  beforeAll(async () => {
    proxy = new RedisProxy(await freePort());
    // Redis is unreachable while the API boots: it must serve anyway.
    api = await startPlayerApi({ REDIS_PORT: String(proxy.port) });
    await listen(api.app);
    url = notificationsUrl(api.app);
    dispatcher = await startInProcessDispatcher(await dispatcherEnv(api.db, api.prefix));
    const store = api.app.get(MatchStore, { strict: false });
    // The API's own signal (the store's) goes through the proxy; the relays also poll every 250 ms.
    matches = new MatchDriver(api.ds, store);
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
    await proxy?.close();
  });

  const published = (matchId: string, revision: number) =>
    waitFor(
      async () =>
        (await outboxRows(api.ds, [matchId])).some(
          (row) => row.revision === revision && row.status === 'published',
        ) || undefined,
      { what: `r${revision} of ${matchId} published` },
    );

  const playerChannelsConnected = async () => {
    const redis = testRedis();
    try {
      await waitFor(
        async () =>
          String(await redis.call('CLIENT', 'LIST')).includes(
            `name=${api.prefix}${PLAYER_CHANNELS_CONNECTION} `,
          ) || undefined,
        { what: "the player channels' subscription" },
      );
    } finally {
      redis.disconnect();
    }
  };

  it('subscribes once Redis is reachable, and sockets catch up on what was published before', async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const client = await TestSocket.ready(url, a.token);
    const matchId = await matches.create([a.playerId, b.playerId]);
    await matches.advance(matchId);
    await published(matchId, 2);
    expect(client.revisions(matchId)).toEqual([]);
    // The socket knows of no match yet: a resume names it, as the SDK's follow() does.
    client.send({ type: 'resume', matches: { [matchId]: 0 } });
    await client.waitForRevision(matchId, 2);

    await proxy.open();
    await waitFor(() => Promise.resolve(proxy.connections > 0 || undefined), {
      what: 'the API to reach Redis',
    });
    await matches.advance(matchId);
    await client.waitForRevision(matchId, 3, 20_000);
    expect(client.revisions(matchId)).toEqual([1, 2, 3]);
    client.close();
  });

  it("fills in what was published before a slow player channel's subscription landed", async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    await playerChannelsConnected();
    // Redis stays connected but the player channels' SUBSCRIBE is held past the 1 s follow
    // timeout: the socket is told `ready` before its player's channel is subscribed.
    proxy.hold(PLAYER_CHANNELS_CONNECTION);
    const client = await TestSocket.ready(url, a.token);
    const matchId = await matches.create([a.playerId, b.playerId]);
    await published(matchId, 1);
    expect(client.revisions(matchId)).toEqual([]);
    proxy.release();
    // No later event reveals the match: only a catch-up once the subscription lands can bring it.
    await client.waitForRevision(matchId, 1, 20_000);
    await matches.advance(matchId);
    await client.waitForRevision(matchId, 2, 20_000);
    expect(client.revisions(matchId)).toEqual([1, 2]);
    client.close();
  });

  it("fills in events published while the replica's subscription was cut", async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const client = await TestSocket.ready(url, a.token);
    const matchId = await matches.create([a.playerId, b.playerId]);
    await client.waitForRevision(matchId, 1);

    proxy.cut();
    await matches.advance(matchId);
    // And a match the socket has never heard of, with no later event to reveal it.
    const unseen = await matches.create([a.playerId, b.playerId]);
    await published(matchId, 2);
    await published(unseen, 1);
    // Published while nobody on this replica listened: only the catch-up can bring them.
    expect(client.revisions(matchId)).toEqual([1]);
    expect(client.revisions(unseen)).toEqual([]);
    await proxy.open();
    await client.waitForRevision(matchId, 2, 20_000);
    await client.waitForRevision(unseen, 1, 20_000);
    expect(client.revisions(matchId)).toEqual([1, 2]);
    expect(client.revisions(unseen)).toEqual([1]);
    // And live again: the player's channel is subscribed anew (targeted fan-out, the default).
    await matches.advance(matchId);
    await client.waitForRevision(matchId, 3, 20_000);
    expect(client.revisions(matchId)).toEqual([1, 2, 3]);
    client.close();
  });

  it('closes the socket of a session revoked while the subscription was cut, once it is back', async () => {
    const player = await api.newPlayer();
    const client = await TestSocket.ready(url, player.token);
    proxy.cut();
    // The revocation commits; its announcement has no Redis to go through.
    const started = performance.now();
    const signedOut = await api.request('DELETE', '/v1/sessions/current', { token: player.token });
    expect(signedOut.statusCode).toBe(204);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(client.socket.readyState).toBe(client.socket.OPEN);

    await proxy.open();
    const closed = await Promise.race([client.closed, delay(20_000, 'still open')]);
    expect(closed).toMatchObject({ code: NotificationCloseCode.UNAUTHENTICATED });
  });

  it('subscribes under its own connection name, so operators can tell it apart', async () => {
    const redis = testRedis();
    try {
      const clients = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
      expect(clients).toContain(`name=${api.prefix}:api-notifications `);
    } finally {
      redis.disconnect();
    }
  });
});

/** The connection name the API's player channels subscribe under (its suffix). */
const PLAYER_CHANNELS_CONNECTION = ':api-player-notifications';

/**
 * A TCP proxy to the test Redis that can refuse connections, cut the open ones, and hold back
 * what the connections of one name send (Redis slow to answer them, not gone).
 */
class RedisProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private heldName: string | undefined;
  private readonly releases = new Set<() => void>();
  connections = 0;

  constructor(readonly port: number) {}

  /** From now on, commands of connections named `...name` wait until {@link release}. */
  hold(name: string): void {
    this.heldName = name;
  }

  release(): void {
    this.heldName = undefined;
    for (const release of this.releases) release();
    this.releases.clear();
  }

  open(): Promise<void> {
    const server = createServer((downstream) => {
      this.connections += 1;
      const upstream = createConnection(testServices.redisPort, testServices.redisHost);
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      this.forward(downstream, upstream);
      upstream.pipe(downstream);
      const end = () => {
        downstream.destroy();
        upstream.destroy();
      };
      downstream.on('close', end);
      upstream.on('close', end);
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Client to Redis, held back while the connection's name (CLIENT SETNAME) is the held one. */
  private forward(downstream: Socket, upstream: Socket): void {
    // CLIENT SETNAME is among a connection's first commands.
    let opening = '';
    const held: Buffer[] = [];
    downstream.on('data', (chunk: Buffer) => {
      if (opening.length < 4096) opening += chunk.toString('latin1');
      const name = this.heldName;
      if (held.length === 0 && (name === undefined || !opening.includes(name))) {
        upstream.write(chunk);
        return;
      }
      held.push(chunk);
      if (held.length === 1) {
        this.releases.add(() => {
          for (const part of held.splice(0)) upstream.write(part);
        });
      }
    });
  }

  /** Closes the listener and every proxied connection: Redis is gone for the API. */
  cut(): void {
    this.server?.close();
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await Promise.resolve();
  }
}
