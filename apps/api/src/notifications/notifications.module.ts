import { Module } from '@nestjs/common';
import { MatchesModule } from '@matchplane/matches';
import { MatchEventsController } from './match-events.controller';
import { MatchReplayReader } from './match-replay.reader';
import { NotificationFanoutListener } from './notification-fanout.listener';
import { ContractNotificationsGateway, NotificationsGateway } from './notifications.gateway';
import { PlayerSocketsRegistry } from './player-sockets.registry';

/**
 * Client notifications: the `/v1/notifications` WebSocket fed by the dispatcher's Redis
 * transport events (every replica receives every event and pushes it to its own sockets), with
 * resume from the retained outbox rows, and the same history over HTTP.
 */
@Module({
  imports: [MatchesModule],
  controllers: [MatchEventsController],
  providers: [
    MatchReplayReader,
    PlayerSocketsRegistry,
    NotificationFanoutListener,
    NotificationsGateway,
    ContractNotificationsGateway,
  ],
})
export class NotificationsModule {}
