import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import type { WebSocket } from 'ws';
import { ApiConfig } from '@matchplane/config';
import type { MatchEventMessage, StateNotification } from '@matchplane/contracts';
import { MetricsRegistry } from '@matchplane/observability';
import { MatchReplayReader } from './match-replay.reader';
import type { LiveEvent, NotificationSession } from './notification.session';
import type { SocketBuffer } from './socket-buffer';

/** Players per catch-up query. */
const CATCH_UP_BATCH = 1_000;

interface Connection {
  readonly session: NotificationSession;
  readonly buffer: SocketBuffer;
  readonly socket: WebSocket;
}

/**
 * This replica's notification sockets by player (a player may have several: two devices), the
 * fan-out of every notification to them, and the heartbeat that drops dead sockets.
 */
@Injectable()
export class PlayerSocketsRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly byPlayer = new Map<string, Set<Connection>>();
  private readonly bySocket = new Map<WebSocket, Connection>();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly sockets: Gauge;
  private readonly fannedOut: Counter;
  private readonly dead: Counter;
  readonly slowConsumers: Counter;

  constructor(
    @Inject(ApiConfig) private readonly config: ApiConfig,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    private readonly reader: MatchReplayReader,
  ) {
    const registers = [registry];
    this.sockets = new Gauge({
      name: 'notification_sockets',
      help: 'Authenticated notification sockets on this replica',
      registers,
    });
    this.fannedOut = new Counter({
      name: 'notification_live_events_total',
      help: 'Live match events handed to a socket of a participant on this replica',
      registers,
    });
    this.slowConsumers = new Counter({
      name: 'notification_slow_consumer_closes_total',
      help: 'Sockets closed with 4008 because their client did not keep up',
      registers,
    });
    this.dead = new Counter({
      name: 'notification_dead_socket_drops_total',
      help: 'Sockets dropped because they answered no heartbeat ping',
      registers,
    });
  }

  onApplicationBootstrap(): void {
    this.heartbeat = setInterval(() => this.beat(), this.config.NOTIFY_HEARTBEAT_INTERVAL_MS);
    this.heartbeat.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.heartbeat);
  }

  add(socket: WebSocket, session: NotificationSession, buffer: SocketBuffer): void {
    const connection: Connection = { session, buffer, socket };
    this.bySocket.set(socket, connection);
    let set = this.byPlayer.get(session.playerId);
    if (!set) this.byPlayer.set(session.playerId, (set = new Set()));
    set.add(connection);
    this.sockets.inc();
  }

  remove(socket: WebSocket): void {
    const connection = this.bySocket.get(socket);
    if (!connection) return;
    this.bySocket.delete(socket);
    connection.session.closedByPeer();
    const set = this.byPlayer.get(connection.session.playerId);
    set?.delete(connection);
    if (set?.size === 0) this.byPlayer.delete(connection.session.playerId);
    this.sockets.dec();
  }

  get size(): number {
    return this.bySocket.size;
  }

  /** Hands a delivered match event to every socket of its participants on this replica. */
  fanOut(notification: StateNotification): void {
    // Ticket events are not part of this protocol: a client follows its ticket over HTTP.
    if (notification.aggregateType !== 'match') return;
    let event: LiveEvent | undefined;
    for (const playerId of notification.playerIds) {
      const set = this.byPlayer.get(playerId);
      if (!set) continue;
      event ??= liveEvent(notification);
      for (const { session } of set) {
        session.live(event);
        this.fannedOut.inc();
      }
    }
  }

  /**
   * After publishes may have been lost (the subscription was down since about `since`): every
   * socket fills in the matches it follows, and hears from revision 1 of its player's matches
   * that changed meanwhile which it never heard of.
   */
  async catchUpAll(since: Date): Promise<void> {
    for (const { session } of this.bySocket.values()) session.catchUp();
    const players = [...this.byPlayer.keys()];
    for (let i = 0; i < players.length; i += CATCH_UP_BATCH) {
      const recent = await this.reader.recentMatchesOf(players.slice(i, i + CATCH_UP_BATCH), since);
      for (const { playerId, matchId } of recent) {
        for (const { session } of this.byPlayer.get(playerId) ?? []) session.discover(matchId);
      }
    }
  }

  /** Closes every socket (the replica is going away); clients reconnect elsewhere and resume. */
  closeAll(code: number, reason: string): void {
    for (const { session } of this.bySocket.values()) session.close(code, reason);
  }

  private beat(): void {
    for (const { buffer, socket } of this.bySocket.values()) {
      if (buffer.heartbeat()) continue;
      this.dead.inc();
      socket.terminate();
    }
  }
}

/** Serialized once per notification, however many sockets receive it. */
function liveEvent(notification: StateNotification): LiveEvent {
  const message: MatchEventMessage = {
    type: 'event',
    event: notification.event,
    matchId: notification.aggregateId,
    revision: notification.revision,
    state: notification.state,
    occurredAt: notification.occurredAt,
  };
  return {
    matchId: message.matchId,
    revision: message.revision,
    state: message.state,
    text: JSON.stringify(message),
  };
}
