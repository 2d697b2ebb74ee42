import { Module, type DynamicModule } from '@nestjs/common';
import { MatchesModule } from '@matchplane/matches';
import type { ApiConfig } from '../api.config';
import { MatchEventsController } from './match-events.controller';
import { MatchReplayReader } from './match-replay.reader';
import { NotificationFanoutListener } from './notification-fanout.listener';
import { NotificationFanoutOptions, NotificationSocketOptions } from './notification.options';
import { PlayerChannelsListener } from './player-channels.listener';
import { ContractNotificationsGateway, NotificationsGateway } from './notifications.gateway';
import { PlayerSocketsRegistry } from './player-sockets.registry';

/**
 * Client notifications: the `/v1/notifications` WebSocket fed by the dispatcher's Redis
 * transport events (on the channels of the players this replica holds sockets of, or broadcast to
 * every replica, as the dispatcher's NOTIFY_FANOUT says), with resume from the retained outbox
 * rows, and the same history over HTTP.
 */
@Module({})
export class NotificationsModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: NotificationsModule,
      imports: [MatchesModule],
      controllers: [MatchEventsController],
      providers: [
        { provide: NotificationSocketOptions, useValue: NotificationSocketOptions.of(config) },
        { provide: NotificationFanoutOptions, useValue: NotificationFanoutOptions.of(config) },
        MatchReplayReader,
        PlayerSocketsRegistry,
        NotificationFanoutListener,
        PlayerChannelsListener,
        NotificationsGateway,
        ContractNotificationsGateway,
      ],
    };
  }
}
