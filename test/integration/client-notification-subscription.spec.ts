import type Redis from 'ioredis';
import { notificationPattern, type StateNotification } from '@matchplane/contracts';
import { createMatch } from '@matchplane/domain';
import { envelopesFor, OutboxWriter } from '@matchplane/outbox';
import { randomUUID } from 'node:crypto';
import { ClientNotificationSubscriber } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';
import { outboxRows, useOutboxTestbed } from '../support/outbox-fixtures';
import { waitFor } from '../support/processes';
import { testRedis } from '../support/redis';

/**
 * The client channel reaches every API replica; each drops what no client receives. So the
 * dispatcher publishes only the match's events there: a ticket event is delivered (settled) and
 * never published.
 */
describe(`${ClientNotificationSubscriber.name} on the client channel`, () => {
  const testbed = useOutboxTestbed();
  let listener: Redis;
  const received: StateNotification[] = [];

  beforeAll(async () => {
    listener = testRedis();
    listener.on('message', (_channel: string, message: string) => {
      received.push((JSON.parse(message) as { data: StateNotification }).data);
    });
    await listener.subscribe(notificationPattern(testbed.prefix));
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
    const dispatcher = await testbed.startDispatcher({ OUTBOX_POLL_INTERVAL_MS: '50' });
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
    await waitFor(
      () => Promise.resolve(received.some((n) => n.aggregateId === matchId) ? true : undefined),
      { what: 'the match event on the client channel' },
    );

    expect(received.map((n) => [n.event, n.aggregateId])).toEqual([
      ['match.state_changed', matchId],
    ]);
    await dispatcher.close();
  });
});
