import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { ClientProxy, ClientsModule, Transport } from '@nestjs/microservices';
import { RedisKeyspace, type ServiceConfig } from '@matchplane/config';
import { TICKET_STATE_CHANGED } from '@matchplane/domain';
import { SubscribesTo, type OutboxEnvelope, type OutboxSubscriber } from '@matchplane/outbox';
import { redisTransportOptions } from '@matchplane/persistence';
import type { DispatcherConfig } from '../../apps/dispatcher/src/dispatcher.config';
import {
  PatientTransport,
  StateNotificationPublisher,
} from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';

/*
 * The delivery suites' and bench:outbox's sink. Their aggregates write `ticket.state_changed`
 * rows, which no production subscriber publishes; this one publishes each with the client
 * notification subscriber's publisher (same transport options, same packet), on a channel of
 * its own, so they observe a dispatcher delivering through pub/sub.
 */

const DELIVERY_SINK_CLIENT = Symbol('DELIVERY_SINK_CLIENT');
const DELIVERY_SINK_WAIT_MS = Symbol('DELIVERY_SINK_WAIT_MS');

/** The channel the sink publishes on (the Nest Redis transport's pattern). */
export function deliverySinkPattern(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}.delivery-sink`;
}

@Injectable()
@SubscribesTo(TICKET_STATE_CHANGED)
export class DeliverySinkSubscriber implements OutboxSubscriber {
  private readonly publisher: StateNotificationPublisher;

  constructor(
    @Inject(DELIVERY_SINK_CLIENT) client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
    @Inject(DELIVERY_SINK_WAIT_MS) waitMs: number,
  ) {
    this.publisher = new StateNotificationPublisher(
      new PatientTransport(client, waitMs),
      deliverySinkPattern(keyspace.REDIS_KEY_PREFIX),
    );
  }

  handle(envelope: OutboxEnvelope): Promise<void> {
    return this.publisher.publish(envelope);
  }
}

@Module({})
export class DeliverySinkModule {
  static forRoot(
    config: ServiceConfig & Pick<DispatcherConfig, 'NOTIFY_PUBLISH_WAIT_MS'>,
  ): DynamicModule {
    return {
      module: DeliverySinkModule,
      imports: [
        ClientsModule.register([
          {
            name: DELIVERY_SINK_CLIENT,
            transport: Transport.REDIS,
            options: redisTransportOptions(
              config,
              `${config.REDIS_KEY_PREFIX}:dispatcher-delivery-sink`,
              { reconnect: false, autoPipelining: true },
            ),
          },
        ]),
      ],
      providers: [
        DeliverySinkSubscriber,
        { provide: DELIVERY_SINK_WAIT_MS, useValue: config.NOTIFY_PUBLISH_WAIT_MS },
      ],
    };
  }
}
