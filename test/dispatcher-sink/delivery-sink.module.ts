import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { ClientProxy, ClientsModule, Transport } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { RedisKeyspace, type ServiceConfig } from '@matchplane/config';
import { TICKET_STATE_CHANGED } from '@matchplane/domain';
import { SubscribesTo, type OutboxEnvelope, type OutboxSubscriber } from '@matchplane/outbox';
import { redisTransportOptions } from '@matchplane/persistence';
import { stateNotificationOf } from '../../apps/dispatcher/src/subscribers/client-notification.subscriber';

/*
 * The delivery suites' and bench:outbox's sink. Their aggregates write `ticket.state_changed`
 * rows, which no production subscriber publishes; this one publishes each as the client
 * notification subscriber publishes a match event (same transport options, same packet), on a
 * channel of its own, so they observe a dispatcher delivering through pub/sub.
 */

const DELIVERY_SINK_CLIENT = Symbol('DELIVERY_SINK_CLIENT');

/** The channel the sink publishes on (the Nest Redis transport's pattern). */
export function deliverySinkPattern(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}.delivery-sink`;
}

@Injectable()
@SubscribesTo(TICKET_STATE_CHANGED)
export class DeliverySinkSubscriber implements OutboxSubscriber {
  private readonly pattern: string;

  constructor(
    @Inject(DELIVERY_SINK_CLIENT) private readonly client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.pattern = deliverySinkPattern(keyspace.REDIS_KEY_PREFIX);
  }

  async handle(envelope: OutboxEnvelope): Promise<void> {
    await lastValueFrom(this.client.emit(this.pattern, stateNotificationOf(envelope)), {
      defaultValue: undefined,
    });
  }
}

@Module({})
export class DeliverySinkModule {
  static forRoot(config: ServiceConfig): DynamicModule {
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
      providers: [DeliverySinkSubscriber],
    };
  }
}
