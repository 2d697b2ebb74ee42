import type Redis from 'ioredis';
import {
  notificationPattern,
  playerNotificationChannel,
  type StateNotification,
} from '@matchplane/contracts';
import { createMatch } from '@matchplane/domain';
import { envelopesFor, OutboxWriter } from '@matchplane/outbox';
import { randomUUID } from 'node:crypto';
import { ClientNotificationSubscriber } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';
import { outboxRows, useOutboxTestbed } from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';
import { testRedis } from '../support/redis';

/**
 * Only the match's events are published (a ticket event is delivered, settled and never
 * published): targeted, once on each recipient's channel, heard by the replicas holding a socket
 * of that player; broadcast, once on the channel every replica hears.
 */
describe.each(['targeted', 'broadcast'] as const)(
  `${ClientNotificationSubscriber.name} with NOTIFY_FANOUT=%s`,
  (fanout) => {
    const testbed = useOutboxTestbed();
    let listener: Redis;
    const received: { channel: string; notification: StateNotification }[] = [];

    beforeAll(async () => {
      listener = testRedis();
      listener.on('pmessage', (_pattern: string, channel: string, message: string) => {
        const notification = (JSON.parse(message) as { data: StateNotification }).data;
        received.push({ channel, notification });
      });
      // Every channel of the deployment's notifications: the broadcast one and every player's.
      await listener.psubscribe(`${notificationPattern(testbed.prefix)}*`);
    });

    afterAll(() => listener.disconnect());

    const published = (aggregateId: string) =>
      waitFor(
        async () => {
          const [row] = await outboxRows(testbed.ds, [aggregateId]);
          return row?.status === 'published' ? true : undefined;
        },
        { what: `the outbox row of ${aggregateId} to be published` },
      );

    it('publishes a match event and not a ticket event', async () => {
      const dispatcher = await testbed.startDispatcher({
        OUTBOX_POLL_INTERVAL_MS: '50',
        NOTIFY_FANOUT: fanout,
      });
      const [ticketId] = await testbed.aggregates.add(1);
      await testbed.aggregates.advance(ticketId!);
      await published(ticketId!);
      expect(dispatcher.recorder.deliveredRevisions(ticketId!)).toEqual([1]);

      // Written after the ticket's delivery settled: on the dispatcher's one publishing connection
      // a ticket publish would have reached the channel before this one.
      const matchId = randomUUID();
      const participants = [0, 1].map((team) => ({
        playerId: randomUUID(),
        ticketId: randomUUID(),
        team,
      }));
      const created = createMatch(
        { id: matchId, mode: 'duel', region: 'eu-west', participants },
        new Date(),
      );
      await new OutboxWriter().append(testbed.ds.manager, envelopesFor(created.events));
      const channels =
        fanout === 'targeted'
          ? participants.map(({ playerId }) => playerNotificationChannel(testbed.prefix, playerId))
          : [notificationPattern(testbed.prefix)];
      await waitFor(
        () =>
          Promise.resolve(
            received.filter(({ notification }) => notification.aggregateId === matchId).length >=
              channels.length
              ? true
              : undefined,
          ),
        { what: 'the match event on its channels' },
      );

      expect(
        received
          .map(({ channel, notification }) => [
            channel,
            notification.event,
            notification.aggregateId,
          ])
          .sort(),
      ).toEqual(channels.map((channel) => [channel, 'match.state_changed', matchId]).sort());
      await dispatcher.close();
    });
  },
);
