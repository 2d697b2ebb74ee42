import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type Redis from 'ioredis';
import { playerNotificationChannel } from '@matchplane/contracts';
import { MatchStore } from '@matchplane/matches';
import { MetricsRegistry } from '@matchplane/observability';
import {
  dispatcherEnv,
  startInProcessDispatcher,
  type InProcessDispatcher,
} from '../support/outbox-fixtures';
import { MatchDriver, TestSocket, listen, notificationsUrl } from '../support/notification-clients';
import { startApiReplica, startPlayerApi, type PlayerApi } from '../support/player-api';
import { waitFor } from '../support/processes';
import { testRedis } from '../support/redis';

/**
 * Targeted fan-out (NOTIFY_FANOUT=targeted, the default) across two API replicas in process: an
 * event is published on its recipients' channels, heard only by the replica holding their
 * sockets; the other replica hears nothing of it. Broadcast reaches both as before.
 */
describe.each(['targeted', 'broadcast'] as const)(
  'Notifications with NOTIFY_FANOUT=%s',
  (fanout) => {
    let api: PlayerApi;
    let replica: NestFastifyApplication;
    let dispatcher: InProcessDispatcher;
    let matches: MatchDriver;
    let redis: Redis;

    beforeAll(async () => {
      redis = testRedis();
      api = await startPlayerApi();
      await listen(api.app);
      replica = await startApiReplica(api);
      await listen(replica);
      dispatcher = await startInProcessDispatcher(
        await dispatcherEnv(api.db, api.prefix, { NOTIFY_FANOUT: fanout }),
      );
      matches = new MatchDriver(api.ds, api.app.get(MatchStore, { strict: false }));
    });

    afterAll(async () => {
      redis?.disconnect();
      await dispatcher?.close();
      await replica?.close();
      await api?.close();
    });

    /** What a replica's fan-out heard on player channels (its own metric, as an operator reads it). */
    const heardOnPlayerChannels = async (app: NestFastifyApplication) => {
      const text = await app.get(MetricsRegistry, { strict: false }).metrics();
      return Number(
        /^notification_player_channel_events_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1],
      );
    };
    const handedToSockets = async (app: NestFastifyApplication) => {
      const text = await app.get(MetricsRegistry, { strict: false }).metrics();
      return Number(/^notification_live_events_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1]);
    };

    it('reaches the sockets of a match’s players on their replica, and only that replica hears it when targeted', async () => {
      const [a, b] = await Promise.all([api.newPlayer(), api.newPlayer()]);
      const onA = await TestSocket.ready(notificationsUrl(api.app), a.token);
      const onB = await TestSocket.ready(notificationsUrl(api.app), b.token);
      const before = {
        first: await heardOnPlayerChannels(api.app),
        other: await heardOnPlayerChannels(replica),
      };

      const matchId = await matches.create([a.playerId, b.playerId]);
      await matches.advance(matchId);
      await onA.waitForRevision(matchId, 2);
      await onB.waitForRevision(matchId, 2);
      expect(onA.revisions(matchId)).toEqual([1, 2]);
      expect(onB.revisions(matchId)).toEqual([1, 2]);

      const heard = {
        first: (await heardOnPlayerChannels(api.app)) - before.first,
        other: (await heardOnPlayerChannels(replica)) - before.other,
      };
      // Targeted: two revisions on each of two players' channels, all on the replica of their
      // sockets. Broadcast: nothing on player channels, and the other replica filtered both out.
      expect(heard).toEqual(
        fanout === 'targeted' ? { first: 4, other: 0 } : { first: 0, other: 0 },
      );
      expect(await handedToSockets(replica)).toBe(0);
      onA.close();
      onB.close();
    });

    it('subscribes to a player’s channel while the replica holds a socket of that player, and leaves it after the last one closes', async () => {
      const a = await api.newPlayer();
      const channel = playerNotificationChannel(api.prefix, a.playerId);
      const subscribers = async () => {
        const [, count] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
        return Number(count);
      };
      const first = await TestSocket.ready(notificationsUrl(api.app), a.token);
      const second = await TestSocket.ready(notificationsUrl(replica), a.token);
      const third = await TestSocket.ready(notificationsUrl(replica), a.token);
      // Told `ready` only once subscribed: one subscription per replica, not per socket.
      expect(await subscribers()).toBe(2);
      first.close();
      await first.closed;
      await waitFor(async () => ((await subscribers()) === 1 ? true : undefined), {
        what: 'the first replica to leave the channel',
      });
      second.close();
      await second.closed;
      // The player still has a socket on the replica: it keeps the channel.
      const matchId = await matches.create([a.playerId, (await api.newPlayer()).playerId]);
      await third.waitForRevision(matchId, 1);
      expect(await subscribers()).toBe(1);
      third.close();
      await waitFor(async () => ((await subscribers()) === 0 ? true : undefined), {
        what: 'the replica to leave the channel with its last socket of the player',
      });
    });
  },
);
