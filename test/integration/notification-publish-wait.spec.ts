import { playerNotificationChannel, type StateNotification } from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { ClientNotificationSubscriber } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';
import {
  dispatcherEnv,
  outboxRows,
  startInProcessDispatcher,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { MatchDriver } from '../support/notification-clients';
import { startPlayerApi, type PlayerApi } from '../support/player-api';
import { freePort, waitFor } from '../support/processes';
import { testRedis } from '../support/redis';
import { RedisProxy } from '../support/redis-proxy';

/**
 * A Redis failover (a Sentinel promotion takes a second or two) leaves the dispatcher with no
 * Redis for a moment. A notification published then waits it out (NOTIFY_PUBLISH_WAIT_MS) and
 * goes out once Redis answers again, instead of failing its delivery into the outbox's backoff
 * (0.5 s, then 1 s, 2 s...), which delivered it seconds after Redis was back. The dispatcher
 * reaches Redis through a TCP proxy the test cuts and opens again.
 */
describe(ClientNotificationSubscriber.name, () => {
  let proxy: RedisProxy;
  let api: PlayerApi;
  let dispatcher: InProcessDispatcher;
  let matches: MatchDriver;

  beforeAll(async () => {
    proxy = new RedisProxy(await freePort());
    await proxy.open();
    api = await startPlayerApi();
    dispatcher = await startInProcessDispatcher(
      await dispatcherEnv(api.db, api.prefix, { REDIS_PORT: String(proxy.port) }),
    );
    matches = new MatchDriver(api.ds, api.app.get(MatchStore, { strict: false }));
  });

  afterAll(async () => {
    await dispatcher?.close();
    await api?.close();
    await proxy?.close();
  });

  const row = (matchId: string, revision: number) =>
    waitFor(
      async () =>
        (await outboxRows(api.ds, [matchId])).find(
          (candidate) => candidate.revision === revision && candidate.status === 'published',
        ),
      { what: `r${revision} of ${matchId} published` },
    );

  it('waits out a short Redis outage instead of failing the delivery', async () => {
    const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
    const listener = testRedis();
    const heard: StateNotification[] = [];
    try {
      listener.on('message', (_channel: string, message: string) =>
        heard.push((JSON.parse(message) as { data: StateNotification }).data),
      );
      await listener.subscribe(playerNotificationChannel(api.prefix, a.playerId));
      const matchId = await matches.create([a.playerId, b.playerId]);
      await row(matchId, 1);

      proxy.cut();
      await matches.advance(matchId);
      // Longer than the relay's polling backstop: the delivery is attempted while Redis is gone.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await proxy.open();

      const published = await row(matchId, 2);
      expect(published.attempts).toBe(0);
      await waitFor(() => Promise.resolve(heard.some((n) => n.revision === 2) || undefined), {
        what: 'revision 2 on the player channel',
      });
      expect(heard.map((n) => n.revision)).toEqual([1, 2]);
    } finally {
      listener.disconnect();
    }
  });
});
