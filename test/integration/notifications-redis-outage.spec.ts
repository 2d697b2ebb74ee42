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
import { RedisProxy } from '../support/redis-proxy';

/**
 * Redis pub/sub keeps nothing for a subscriber that is not there. The API reaches Redis through a
 * TCP proxy the test opens and cuts, while the dispatcher reaches it directly: events published
 * while the API is cut off must still reach its sockets, from history, once it is back.
 */
/** The connection name the API's player channels subscribe under (its suffix). */
const PLAYER_CHANNELS_CONNECTION = ':api-player-notifications';

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
    // The revocation commits and the sign-out answers while Redis is still gone: its announcement
    // has no Redis to go through. (How long that took is a bench's figure, not this suite's: a
    // time bound here fails on a loaded runner.)
    const signedOut = await api.request('DELETE', '/v1/sessions/current', { token: player.token });
    expect(signedOut.statusCode).toBe(204);
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
