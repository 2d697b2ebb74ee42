import { SetMetadata } from '@nestjs/common';
import type { OutboxEnvelope } from './envelope.builder';

export const OUTBOX_SUBSCRIBER = Symbol('matchplane:outbox-subscriber');

/**
 * A provider that receives delivered outbox events. Register it in any module the dispatcher
 * imports and mark it with {@link SubscribesTo}; the dispatcher discovers it through Nest DI.
 * `handle` must be idempotent: delivery is at least once (dedupe on aggregate id + revision).
 */
export interface OutboxSubscriber {
  handle(envelope: OutboxEnvelope): Promise<void>;
}

/** Marks an {@link OutboxSubscriber} provider and names the event types it receives. */
export const SubscribesTo = (...events: string[]): ClassDecorator =>
  SetMetadata(OUTBOX_SUBSCRIBER, events);

/**
 * Thrown by a subscriber for an event it can never accept (retrying cannot help): the row is
 * dead-lettered at once instead of after MAX_OUTBOX_DELIVERY_ATTEMPTS.
 */
export class PermanentDeliveryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentDeliveryError';
  }
}
