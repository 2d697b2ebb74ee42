import { BullModule } from '@nestjs/bullmq';
import { Module, type DynamicModule } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { redisKeyPrefix } from '@matchplane/config';
import { DispatcherConfig } from './dispatcher.config';
import { ServiceRuntimeModule } from '@matchplane/observability';
import { OutboxModule, OutboxStatsService } from '@matchplane/outbox';
import { ALLOCATION_QUEUE } from '@matchplane/allocation';
import { bullConnection, redisTransportClient } from '@matchplane/persistence';
import { DeliveryPipeline } from './delivery.pipeline';
import { DispatcherLease } from './dispatcher.lease';
import { DispatcherMetrics } from './dispatcher.metrics';
import { OutboxBacklogMetrics } from './outbox-backlog.metrics';
import { OutboxRelay } from './outbox.relay';
import {
  ClientNotificationSubscriber,
  HISTORY_ONLY_EVENT_TYPES,
  NOTIFICATIONS_CLIENT,
} from './subscribers/client-notification.subscriber';
import { AllocationTriggerSubscriber } from './subscribers/allocation-trigger.subscriber';
import { BackfillTriggerSubscriber } from './subscribers/backfill-trigger.subscriber';
import { RejoinTokenTriggerSubscriber } from './subscribers/rejoin-token-trigger.subscriber';

@Module({})
export class DispatcherModule {
  /** `extraImports`: modules contributing more `@SubscribesTo` providers (webhooks, tests). */
  static forRoot(
    config: DispatcherConfig,
    extraImports: DynamicModule['imports'] = [],
  ): DynamicModule {
    return {
      module: DispatcherModule,
      imports: [
        ServiceRuntimeModule.forWorker(config, { appName: 'dispatcher' }),
        BullModule.forRoot({ connection: bullConnection(config), prefix: redisKeyPrefix(config) }),
        BullModule.registerQueue({ name: ALLOCATION_QUEUE }),
        OutboxModule.forDelivery({
          maxAttempts: config.MAX_OUTBOX_DELIVERY_ATTEMPTS,
          retryBaseMs: config.OUTBOX_RETRY_BASE_MS,
          retryCapMs: config.OUTBOX_RETRY_CAP_MS,
          historyOnlyEvents: HISTORY_ONLY_EVENT_TYPES,
        }),
        ClientsModule.register([
          {
            name: NOTIFICATIONS_CLIENT,
            // A settle starts many deliveries at once: their publishes leave in one write. A lost
            // connection fails its deliveries (retried by the outbox) and the next publish reconnects.
            // Player channels are sharded under Redis Cluster; the broadcast pattern stays plain.
            ...redisTransportClient(config, `${config.REDIS_KEY_PREFIX}:dispatcher-notifications`, {
              reconnect: false,
              autoPipelining: true,
              sharded: config.NOTIFY_FANOUT === 'targeted',
            }),
          },
        ]),
        ...extraImports,
      ],
      providers: [
        { provide: DispatcherConfig, useValue: config },
        DispatcherLease,
        DispatcherMetrics,
        DeliveryPipeline,
        OutboxRelay,
        OutboxStatsService,
        OutboxBacklogMetrics,
        ClientNotificationSubscriber,
        AllocationTriggerSubscriber,
        BackfillTriggerSubscriber,
        RejoinTokenTriggerSubscriber,
      ],
    };
  }
}
