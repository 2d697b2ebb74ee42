import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { EVENT_TYPES, type EventType } from './events';
import type { OutboxEnvelope } from './envelope.builder';
import { OUTBOX_SUBSCRIBER, type OutboxSubscriber } from './outbox-subscriber.decorator';

/** The event types this process settles without a subscriber (see OutboxDeliveryOptions). */
export const HISTORY_ONLY_EVENTS = Symbol('HISTORY_ONLY_EVENTS');

export class SubscriberRegistrationError extends Error {
  override name = 'SubscriberRegistrationError';
}

interface Registered {
  name: string;
  subscriber: OutboxSubscriber;
}

/**
 * Every `@SubscribesTo` provider, by event type. Checked at start-up: an event type nobody
 * receives (unless declared history only), or a subscriber naming an unknown event, stops the
 * dispatcher before it claims a row.
 */
@Injectable()
export class SubscriberRegistry implements OnModuleInit {
  private readonly logger = new Logger(SubscriberRegistry.name);
  private readonly byEvent = new Map<string, Registered[]>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    @Optional()
    @Inject(HISTORY_ONLY_EVENTS)
    private readonly historyOnly: readonly EventType[] = [],
  ) {}

  onModuleInit(): void {
    const known = new Set<string>(EVENT_TYPES);
    const problems: string[] = [];
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object' || seen.has(instance)) continue;
      // useValue providers have no metatype and useFactory/useExisting ones carry the factory
      // there, so the decorated class is the instance's own (as @nestjs/bullmq finds processors).
      const metatype: unknown =
        !wrapper.metatype || wrapper.inject ? instance.constructor : wrapper.metatype;
      if (typeof metatype !== 'function') continue;
      seen.add(instance);
      const events = this.reflector.get<string[] | undefined>(OUTBOX_SUBSCRIBER, metatype);
      if (!events) continue;
      const name = metatype.name;
      if (typeof (instance as Partial<OutboxSubscriber>).handle !== 'function') {
        problems.push(`${name} is marked @SubscribesTo but has no handle(envelope) method`);
        continue;
      }
      if (events.length === 0) problems.push(`${name} subscribes to no event type`);
      for (const event of events) {
        if (!known.has(event)) {
          problems.push(`${name} subscribes to unknown event type "${event}"`);
          continue;
        }
        const list = this.byEvent.get(event) ?? [];
        list.push({ name, subscriber: instance as OutboxSubscriber });
        this.byEvent.set(event, list);
      }
    }
    for (const event of EVENT_TYPES) {
      if (!this.byEvent.has(event) && !this.historyOnly.includes(event)) {
        problems.push(`event type "${event}" has no subscriber`);
      }
    }
    if (problems.length > 0)
      throw new SubscriberRegistrationError(`outbox subscribers: ${problems.join('; ')}`);
    for (const [event, list] of this.byEvent) {
      this.logger.log(`${event} -> ${list.map((entry) => entry.name).join(', ')}`);
    }
    for (const event of this.historyOnly) {
      if (!this.byEvent.has(event)) this.logger.log(`${event} -> nobody (history only)`);
    }
  }

  subscribersOf(envelope: OutboxEnvelope): readonly Registered[] {
    return this.byEvent.get(envelope.event) ?? [];
  }
}
