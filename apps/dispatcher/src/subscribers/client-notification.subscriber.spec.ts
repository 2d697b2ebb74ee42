import 'reflect-metadata';
import { AGGREGATE_TYPE_OF, EVENT_TYPES, OUTBOX_SUBSCRIBER } from '@matchplane/outbox';
import {
  CLIENT_EVENT_TYPES,
  ClientNotificationSubscriber,
  HISTORY_ONLY_EVENT_TYPES,
} from './client-notification.subscriber';

/** The event types the API's fan-out hands to sockets: the match aggregate's. */
const matchEvents = EVENT_TYPES.filter((event) => AGGREGATE_TYPE_OF[event] === 'match');

describe(ClientNotificationSubscriber.name, () => {
  const subscribed = (): unknown =>
    Reflect.getMetadata(OUTBOX_SUBSCRIBER, ClientNotificationSubscriber);

  it('subscribes to exactly the event types clients receive, so nothing else is published to every replica', () => {
    expect([...CLIENT_EVENT_TYPES].sort()).toEqual([...matchEvents].sort());
    expect(subscribed()).toEqual([...CLIENT_EVENT_TYPES]);
  });

  it('publishes no ticket or rating event: those are history only', () => {
    for (const event of HISTORY_ONLY_EVENT_TYPES) expect(subscribed()).not.toContain(event);
    expect(HISTORY_ONLY_EVENT_TYPES).toEqual(['ticket.state_changed', 'rating.updated']);
  });
});
