import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import { isStateNotification, playerNotificationChannel } from '@matchplane/contracts';
import { MetricsRegistry } from '@matchplane/observability';
import { answerWithin, closeRedis } from '@matchplane/persistence';
import { NotificationFanoutOptions } from './notification.options';
import { PlayerChannelSubscriber } from './player-channel-subscriber';
import { PlayerSocketsRegistry } from './player-sockets.registry';

/**
 * How long a new socket waits for its player's SUBSCRIBE before it is told `ready` anyway (Redis
 * slow or down: it catches up from history once the subscription is back).
 */
const FOLLOW_TIMEOUT_MS = 1_000;
/** As the broadcast listener: a catch-up looks this far before a lost subscription. */
const CATCH_UP_LOOKBACK_MS = 5 * 60_000;

/**
 * This replica's end of targeted fan-out (the dispatcher's NOTIFY_FANOUT=targeted): a
 * subscription to each player channel ({@link playerNotificationChannel}) while the replica holds
 * a socket of that player, on a connection of its own. An event is then published only to the
 * replicas of its recipients, instead of to every replica to filter (the broadcast pattern, which
 * NotificationFanoutListener still hears, so a dispatcher set either way reaches every socket).
 * Under Redis Cluster the subscriptions are sharded ({@link PlayerChannelSubscriber}).
 */
@Injectable()
export class PlayerChannelsListener implements OnApplicationShutdown {
  private readonly logger = new Logger(PlayerChannelsListener.name);
  private readonly subscriber: PlayerChannelSubscriber;
  private readonly channelPrefix: string;
  private readonly received: Counter;
  private readonly channels: Gauge;
  private lostAt: Date | undefined;
  private down = false;

  constructor(
    @Inject(NotificationFanoutOptions) config: NotificationFanoutOptions,
    @Inject(Redis) redis: Redis,
    private readonly sockets: PlayerSocketsRegistry,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
  ) {
    this.channelPrefix = playerNotificationChannel(config.REDIS_KEY_PREFIX, '');
    // A subscribed connection serves nothing else: the process's connection, duplicated.
    this.subscriber = PlayerChannelSubscriber.of(
      redis,
      `${config.REDIS_KEY_PREFIX}:api-player-notifications`,
    );
    this.received = new Counter({
      name: 'notification_player_channel_events_total',
      help: 'Notifications this replica heard on the channel of a player it holds a socket of (targeted fan-out)',
      registers: [registry],
    });
    this.channels = new Gauge({
      name: 'notification_player_channels',
      help: 'Player channels this replica subscribes to: the players it holds a socket of',
      registers: [registry],
      collect: () => this.channels.set(this.sockets.playerCount),
    });
    this.subscriber.connection.on(
      this.subscriber.messageEvent,
      (channel: string, message: string) => this.receive(channel, message),
    );
    this.watch();
  }

  /**
   * Subscribes to `playerId`'s channel (again, for a second socket: a no-op for Redis); resolves
   * once Redis has answered, or after {@link FOLLOW_TIMEOUT_MS}, so a socket told `ready` hears
   * every event published after.
   */
  async follow(playerId: string): Promise<void> {
    const askedAt = Date.now();
    const subscribed = this.subscriber.subscribe([this.channelOf(playerId)]);
    try {
      await answerWithin(subscribed, FOLLOW_TIMEOUT_MS);
    } catch (error) {
      this.logger.warn(
        `player channel not subscribed yet (${(error as Error).message}); the socket catches up once it is`,
      );
      // Redis slow, not gone: no reconnection will catch this player up, so its subscription does.
      // (A lost connection fails the SUBSCRIBE here and catches every player up when back.)
      subscribed
        .then(() =>
          this.sockets.catchUpPlayers([playerId], new Date(askedAt - CATCH_UP_LOOKBACK_MS)),
        )
        .catch((failure: Error) =>
          this.logger.warn(`catching up a late player channel failed: ${failure.message}`),
        );
    }
  }

  /** The replica's last socket of `playerId` closed. */
  unfollow(playerId: string): void {
    this.subscriber.unsubscribe(this.channelOf(playerId)).catch(() => undefined);
  }

  onApplicationShutdown(): Promise<void> {
    return closeRedis(this.subscriber.connection);
  }

  private channelOf(playerId: string): string {
    return `${this.channelPrefix}${playerId}`;
  }

  private receive(channel: string, message: string): void {
    if (!channel.startsWith(this.channelPrefix)) return;
    let data: unknown;
    try {
      data = (JSON.parse(message) as { data?: unknown } | null)?.data;
    } catch {
      data = undefined;
    }
    if (!isStateNotification(data)) {
      this.logger.warn(`ignored a malformed notification on ${channel}`);
      return;
    }
    this.received.inc();
    this.sockets.fanOutTo([channel.slice(this.channelPrefix.length)], data);
  }

  /**
   * Pub/sub keeps nothing for a disconnected subscriber: once the connection is back, its players'
   * channels are subscribed again and their sockets fill in from history. A restore that fails
   * (under Cluster, a master still down) waits for the next sign of recovery.
   */
  private watch(): void {
    const connection = this.subscriber.connection;
    connection.on('error', (error: Error) => {
      if (this.down) return;
      this.down = true;
      this.logger.warn(`player channels' connection lost (${error.message}); reconnecting`);
    });
    for (const event of this.subscriber.lostEvents)
      connection.on(event, () => (this.lostAt ??= new Date()));
    for (const event of this.subscriber.restoredEvents) connection.on(event, () => this.restore());
  }

  private restore(): void {
    this.down = false;
    const lostAt = this.lostAt;
    if (!lostAt) return;
    this.lostAt = undefined;
    const since = new Date(lostAt.getTime() - CATCH_UP_LOOKBACK_MS);
    this.subscriber
      .subscribe(this.sockets.players().map((id) => this.channelOf(id)))
      .then(() => this.sockets.catchUpAll(since))
      .catch((error: Error) => {
        this.lostAt ??= lostAt;
        this.logger.warn(`restoring the player channels failed: ${error.message}`);
      });
  }
}
