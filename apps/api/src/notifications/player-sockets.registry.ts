import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import type { WebSocket } from 'ws';
import { NotificationSocketOptions } from './notification.options';
import {
  NotificationCloseCode,
  type MatchEventMessage,
  type StateNotification,
} from '@matchplane/contracts';
import { MetricsRegistry } from '@matchplane/observability';
import { SessionService } from '@matchplane/players';
import { MatchReplayReader } from './match-replay.reader';
import type { LiveEvent, NotificationSession } from './notification.session';
import type { SocketBuffer } from './socket-buffer';

/** Players per catch-up query. */
const CATCH_UP_BATCH = 1_000;
/** Sessions per liveness query after an outage. */
const SESSION_CHECK_BATCH = 1_000;
/**
 * How long a revocation is remembered for sockets still authenticating: one whose session was
 * read as live just before the revocation arrived is closed when it registers.
 */
const REVOCATION_MEMORY_MS = 60_000;

interface Connection {
  readonly session: NotificationSession;
  readonly buffer: SocketBuffer;
  readonly socket: WebSocket;
  /** The player session the socket authenticated with. */
  readonly sessionId: string;
}

const REVOKED_REASON = 'session revoked';

/**
 * This replica's notification sockets by player (a player may have several: two devices), the
 * fan-out of every notification to them, and the heartbeat that drops dead sockets.
 */
@Injectable()
export class PlayerSocketsRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly byPlayer = new Map<string, Set<Connection>>();
  private readonly bySocket = new Map<WebSocket, Connection>();
  private readonly bySession = new Map<string, Set<Connection>>();
  /** Session id to when its revocation may be forgotten. */
  private readonly revokedRecently = new Map<string, number>();
  /** Open sockets per client address, authenticated or not (NOTIFY_MAX_SOCKETS_PER_ADDRESS). */
  private readonly openByAddress = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly sockets: Gauge;
  private readonly fannedOut: Counter;
  private readonly dead: Counter;
  readonly slowConsumers: Counter;
  /** Sockets closed with 4429 (TOO_MANY_CONNECTIONS), by the cap they met. */
  readonly refusedOverCap: Counter;

  constructor(
    @Inject(NotificationSocketOptions) private readonly config: NotificationSocketOptions,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
    private readonly reader: MatchReplayReader,
    private readonly sessions: SessionService,
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
    this.refusedOverCap = new Counter({
      name: 'notification_sockets_refused_total',
      help: 'Sockets closed with 4429 because their session or address already held the most allowed on this replica',
      labelNames: ['cap'],
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

  /**
   * Registers an authenticated socket; false, and the socket closed, if its session was just
   * revoked (4401) or already holds NOTIFY_MAX_SOCKETS_PER_SESSION sockets here (4429). Checked
   * and added in one synchronous step, so concurrent sockets of one session cannot both slip in.
   */
  add(
    socket: WebSocket,
    session: NotificationSession,
    buffer: SocketBuffer,
    sessionId: string,
  ): boolean {
    if ((this.revokedRecently.get(sessionId) ?? 0) > Date.now()) {
      session.close(NotificationCloseCode.UNAUTHENTICATED, REVOKED_REASON);
      return false;
    }
    const cap = this.config.NOTIFY_MAX_SOCKETS_PER_SESSION;
    if (cap > 0 && (this.bySession.get(sessionId)?.size ?? 0) >= cap) {
      this.refusedOverCap.inc({ cap: 'session' });
      session.close(
        NotificationCloseCode.TOO_MANY_CONNECTIONS,
        `this session already holds ${cap} notification sockets on this server`,
      );
      return false;
    }
    const connection: Connection = { session, buffer, socket, sessionId };
    this.bySocket.set(socket, connection);
    addTo(this.byPlayer, session.playerId, connection);
    addTo(this.bySession, sessionId, connection);
    this.sockets.inc();
    return true;
  }

  /** Forgets a closed socket; answers its player's id when it was that player's last one here. */
  remove(socket: WebSocket): string | undefined {
    const connection = this.bySocket.get(socket);
    if (!connection) return undefined;
    this.bySocket.delete(socket);
    connection.session.closedByPeer();
    const playerId = connection.session.playerId;
    removeFrom(this.byPlayer, playerId, connection);
    removeFrom(this.bySession, connection.sessionId, connection);
    this.sockets.dec();
    return this.byPlayer.has(playerId) ? undefined : playerId;
  }

  /** The players with a socket on this replica. */
  players(): string[] {
    return [...this.byPlayer.keys()];
  }

  /** Counts a new socket from `address`; false (not counted) when the address is at its cap. */
  admitAddress(address: string): boolean {
    const cap = this.config.NOTIFY_MAX_SOCKETS_PER_ADDRESS;
    const open = this.openByAddress.get(address) ?? 0;
    if (cap > 0 && open >= cap) {
      this.refusedOverCap.inc({ cap: 'address' });
      return false;
    }
    this.openByAddress.set(address, open + 1);
    return true;
  }

  /** A socket {@link admitAddress} counted has closed. */
  addressClosed(address: string): void {
    const left = (this.openByAddress.get(address) ?? 1) - 1;
    if (left > 0) this.openByAddress.set(address, left);
    else this.openByAddress.delete(address);
  }

  /** A session was revoked (on any replica): its sockets here are closed with 4401. */
  sessionRevoked(sessionId: string): void {
    const now = Date.now();
    for (const [id, until] of this.revokedRecently) {
      if (until <= now) this.revokedRecently.delete(id);
    }
    this.revokedRecently.set(sessionId, now + REVOCATION_MEMORY_MS);
    for (const { session } of this.bySession.get(sessionId) ?? []) {
      session.close(NotificationCloseCode.UNAUTHENTICATED, REVOKED_REASON);
    }
  }

  /** Closes (4401) every socket whose session is no longer live: after revocations may have been missed. */
  async closeEndedSessions(): Promise<void> {
    const sessionIds = [...this.bySession.keys()];
    for (let i = 0; i < sessionIds.length; i += SESSION_CHECK_BATCH) {
      const batch = sessionIds.slice(i, i + SESSION_CHECK_BATCH);
      const live = await this.sessions.liveSessionIds(batch);
      for (const sessionId of batch) {
        if (live.has(sessionId)) continue;
        for (const { session } of this.bySession.get(sessionId) ?? []) {
          session.close(
            NotificationCloseCode.UNAUTHENTICATED,
            'invalid, expired or revoked session',
          );
        }
      }
    }
  }

  get size(): number {
    return this.bySocket.size;
  }

  /** Players with a socket on this replica (the player channels it subscribes to). */
  get playerCount(): number {
    return this.byPlayer.size;
  }

  /** Hands a delivered match event to every socket of its participants on this replica. */
  fanOut(notification: StateNotification): void {
    this.fanOutTo(notification.playerIds, notification);
  }

  /** {@link fanOut} to `playerIds` only (a player channel's notification: to its player). */
  fanOutTo(playerIds: readonly string[], notification: StateNotification): void {
    // Ticket events are not part of this protocol: a client follows its ticket over HTTP.
    if (notification.aggregateType !== 'match') return;
    let event: LiveEvent | undefined;
    for (const playerId of playerIds) {
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
  catchUpAll(since: Date): Promise<void> {
    return this.catchUpPlayers([...this.byPlayer.keys()], since);
  }

  /** {@link catchUpAll} for the sockets of `players` only. */
  async catchUpPlayers(players: readonly string[], since: Date): Promise<void> {
    for (const playerId of players) {
      for (const { session } of this.byPlayer.get(playerId) ?? []) session.catchUp();
    }
    for (let i = 0; i < players.length; i += CATCH_UP_BATCH) {
      const recent = await this.reader.recentMatchesOf(players.slice(i, i + CATCH_UP_BATCH), since);
      for (const { playerId, matchId } of recent) {
        for (const { session } of this.byPlayer.get(playerId) ?? []) session.discover(matchId);
      }
    }
  }

  /**
   * A socket that just connected hears at once of its player's live matches it did not name in a
   * resume. A match formed while the client was reconnecting (its replica gone) was published to
   * no socket of it, and would otherwise reach it only with that match's next event, seconds
   * later (found by the chaos run). A match it named is left to its resume.
   */
  async discoverLive(session: NotificationSession, playerId: string): Promise<void> {
    for (const matchId of await this.reader.liveMatchesOf(playerId)) session.discover(matchId);
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

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  set?.delete(value);
  if (set?.size === 0) index.delete(key);
}

/** Serialized once per notification, however many sockets receive it. */
function liveEvent(notification: StateNotification): LiveEvent {
  const message: MatchEventMessage = {
    type: 'event',
    event: notification.event,
    matchId: notification.aggregateId,
    revision: notification.revision,
    state: notification.state,
    ...(notification.serverRegion === undefined ? {} : { serverRegion: notification.serverRegion }),
    occurredAt: notification.occurredAt,
  };
  return {
    matchId: message.matchId,
    revision: message.revision,
    state: message.state,
    text: JSON.stringify(message),
  };
}
