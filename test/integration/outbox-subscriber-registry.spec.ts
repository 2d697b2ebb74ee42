import { Injectable, Module, type INestApplicationContext, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type Redis from 'ioredis';
import { loadConfig } from '@matchplane/config';
import { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import {
  HISTORY_ONLY_EVENTS,
  SubscribesTo,
  SubscriberRegistrationError,
  SubscriberRegistry,
  type OutboxEnvelope,
  type OutboxSubscriber,
} from '@matchplane/outbox';
import { DispatcherModule } from '../../apps/dispatcher/src/dispatcher.module';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { dispatcherEnv, outboxRow, sleep, TestAggregates } from '../support/outbox-fixtures';
import { deleteRedisPrefix, testRedis, testRedisPrefix } from '../support/redis';

@Injectable()
@SubscribesTo('match.state_changed')
class MatchOnlySubscriber implements OutboxSubscriber {
  handle(_envelope: OutboxEnvelope): Promise<void> {
    return Promise.resolve();
  }
}

@Injectable()
@SubscribesTo('ticket.state_changed')
class TicketOnlySubscriber implements OutboxSubscriber {
  handle(_envelope: OutboxEnvelope): Promise<void> {
    return Promise.resolve();
  }
}

@Injectable()
// Every event type but matches' state changes and tickets', so each test leaves out what it names.
@SubscribesTo(
  'rating.updated',
  'match.participants_added',
  'match.presence_changed',
  'backfill.state_changed',
)
class RemainingEventsSubscriber implements OutboxSubscriber {
  handle(_envelope: OutboxEnvelope): Promise<void> {
    return Promise.resolve();
  }
}

@Injectable()
@SubscribesTo('match.state_changed', 'match.exploded')
class ExplodingSubscriber implements OutboxSubscriber {
  handle(_envelope: OutboxEnvelope): Promise<void> {
    return Promise.resolve();
  }
}

@Injectable()
@SubscribesTo('ticket.state_changed')
class HandlerlessSubscriber {}

@Module({ providers: [ExplodingSubscriber] })
class ExplodingModule {}

async function registryWith(...providers: Provider[]) {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [SubscriberRegistry, ...providers],
  }).compile();
  return moduleRef;
}

/**
 * init()'s rejection, after closing what the failed start had opened (connections, queues).
 * Nest's close() first awaits the init promise, so after a failed init it re-throws instead of
 * running the shutdown hooks; a process exits at that point, a test has to clean up.
 */
async function initFailure(context: INestApplicationContext): Promise<unknown> {
  let failure: unknown;
  try {
    await context.init();
  } catch (error) {
    failure = error;
  }
  if (failure === undefined) {
    await context.close();
    throw new Error('expected the start to be refused');
  }
  Object.assign(context, { initializationPromise: Promise.resolve() });
  await context.close();
  return failure;
}

async function startFailure(providers: Provider[]): Promise<unknown> {
  return initFailure(await registryWith(...providers));
}

const envelopeOf = (event: 'match.state_changed' | 'ticket.state_changed') =>
  ({ event }) as OutboxEnvelope;

describe(SubscriberRegistry.name, () => {
  it('refuses to start while an event type has no subscriber', async () => {
    const error = await startFailure([MatchOnlySubscriber, RemainingEventsSubscriber]);
    expect(error).toBeInstanceOf(SubscriberRegistrationError);
    expect((error as Error).message).toBe(
      'outbox subscribers: event type "ticket.state_changed" has no subscriber',
    );
  });

  it('starts without a subscriber for an event type declared history only, which goes to nobody', async () => {
    const moduleRef = await registryWith(MatchOnlySubscriber, RemainingEventsSubscriber, {
      provide: HISTORY_ONLY_EVENTS,
      useValue: ['ticket.state_changed'],
    });
    await moduleRef.init();
    expect(
      moduleRef.get(SubscriberRegistry).subscribersOf(envelopeOf('ticket.state_changed')),
    ).toEqual([]);
    await moduleRef.close();
  });

  it('refuses to start when a subscriber names an unknown event type', async () => {
    const error = await startFailure([
      ExplodingSubscriber,
      TicketOnlySubscriber,
      RemainingEventsSubscriber,
    ]);
    expect(error).toBeInstanceOf(SubscriberRegistrationError);
    expect((error as Error).message).toBe(
      'outbox subscribers: ExplodingSubscriber subscribes to unknown event type "match.exploded"',
    );
  });

  it('refuses to start when a subscriber has no handle method', async () => {
    const error = await startFailure([
      MatchOnlySubscriber,
      TicketOnlySubscriber,
      RemainingEventsSubscriber,
      HandlerlessSubscriber,
    ]);
    expect((error as Error).message).toBe(
      'outbox subscribers: HandlerlessSubscriber is marked @SubscribesTo but has no handle(envelope) method',
    );
  });

  it('hands each event type to exactly the providers that subscribe to it, an aliased one once', async () => {
    const moduleRef = await registryWith(
      MatchOnlySubscriber,
      TicketOnlySubscriber,
      RemainingEventsSubscriber,
      {
        provide: 'match-subscriber-alias',
        useExisting: MatchOnlySubscriber,
      },
    );
    await moduleRef.init();
    const registry = moduleRef.get(SubscriberRegistry);
    const names = (event: 'match.state_changed' | 'ticket.state_changed') =>
      registry.subscribersOf(envelopeOf(event)).map((entry) => entry.name);
    expect(names('match.state_changed')).toEqual(['MatchOnlySubscriber']);
    expect(names('ticket.state_changed')).toEqual(['TicketOnlySubscriber']);
    await moduleRef.close();
  });

  it('discovers subscribers provided by a factory or as a value, not only as a class', async () => {
    const moduleRef = await registryWith(
      { provide: 'match-subscriber', useFactory: () => new MatchOnlySubscriber() },
      { provide: 'ticket-subscriber', useValue: new TicketOnlySubscriber() },
      { provide: 'rating-subscriber', useValue: new RemainingEventsSubscriber() },
    );
    await moduleRef.init();
    const registry = moduleRef.get(SubscriberRegistry);
    expect(
      registry.subscribersOf(envelopeOf('match.state_changed')).map((entry) => entry.name),
    ).toEqual(['MatchOnlySubscriber']);
    expect(
      registry.subscribersOf(envelopeOf('ticket.state_changed')).map((entry) => entry.name),
    ).toEqual(['TicketOnlySubscriber']);
    await moduleRef.close();
  });
});

describe(`${DispatcherModule.name} with a subscriber naming an unknown event type`, () => {
  let db: TestDatabase;
  let redis: Redis;
  const prefix = testRedisPrefix();

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = testRedis();
  });

  afterAll(async () => {
    redis.disconnect();
    await deleteRedisPrefix(prefix);
    await db.drop();
  });

  it('refuses to start, before it claims a single row', async () => {
    const aggregates = await TestAggregates.create(db, redis, prefix);
    const [id] = await aggregates.add(1);
    const written = await aggregates.advance(id!);

    const config = loadConfig(
      DispatcherConfig,
      await dispatcherEnv(db, prefix, { OUTBOX_POLL_INTERVAL_MS: '50' }),
    );
    const moduleRef = await Test.createTestingModule({
      imports: [DispatcherModule.forRoot(config, [ExplodingModule])],
    })
      .setLogger({ log: () => undefined, error: () => undefined, warn: () => undefined })
      .compile();
    const failure = await initFailure(moduleRef);
    // Had anything started polling despite the refusal, it would have claimed the row by now.
    await sleep(300);
    expect(failure).toBeInstanceOf(SubscriberRegistrationError);
    expect((failure as Error).message).toContain(
      'ExplodingSubscriber subscribes to unknown event type "match.exploded"',
    );
    expect(
      await outboxRow(await db.dataSource(), await aggregates.outboxIdOf(written)),
    ).toMatchObject({
      status: 'pending',
      claimed_at: null,
    });
  });
});
