import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  OutboxDelivery,
  OUTBOX_DELIVERY_OPTIONS,
  type OutboxDeliveryOptions,
} from './outbox.delivery';
import { OutboxMetrics } from './outbox.metrics';
import { OutboxRepository } from './outbox.repository';
import { OutboxDispatchersRepository } from './outbox-dispatchers.repository';
import { OutboxSignal } from './outbox.signal';
import { OutboxWriter } from './outbox.writer';
import { HISTORY_ONLY_EVENTS, SubscriberRegistry } from './subscriber.registry';

/** Owns the `outbox`, `outbox_delivery_attempts` and `outbox_dispatchers` tables. */
@Module({})
export class OutboxModule {
  /** For apps that write state changes: the writer and the post-commit signal. */
  static forWriters(): DynamicModule {
    return {
      module: OutboxModule,
      providers: [OutboxWriter, OutboxSignal],
      exports: [OutboxWriter, OutboxSignal],
    };
  }

  /** For the dispatcher: claims and their owners, delivery to the discovered subscribers, settlement. */
  static forDelivery(options: OutboxDeliveryOptions): DynamicModule {
    return {
      module: OutboxModule,
      imports: [DiscoveryModule],
      providers: [
        OutboxRepository,
        OutboxDispatchersRepository,
        OutboxMetrics,
        SubscriberRegistry,
        OutboxDelivery,
        { provide: OUTBOX_DELIVERY_OPTIONS, useValue: options },
        { provide: HISTORY_ONLY_EVENTS, useValue: options.historyOnlyEvents ?? [] },
      ],
      exports: [OutboxRepository, OutboxDispatchersRepository, OutboxDelivery, SubscriberRegistry],
    };
  }
}
