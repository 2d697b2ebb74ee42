import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  WebSocketGateway,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
} from '@nestjs/websockets';
import { WebSocket, type RawData, type ServerOptions } from 'ws';
import { NotificationSocketOptions } from './notification.options';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  NOTIFICATIONS_PATH,
  NOTIFICATIONS_SUBPROTOCOL,
  NotificationCloseCode,
  NotificationErrorCode,
  ROUTE_PREFIXES,
} from '@matchplane/contracts';
import { SessionService } from '@matchplane/players';
import { clientAddress } from '../http/client-address';
import { parseClientMessage } from './client-message.dto';
import { MatchReplayReader } from './match-replay.reader';
import { NotificationSession } from './notification.session';
import { PlayerChannelsListener } from './player-channels.listener';
import { PlayerSocketsRegistry } from './player-sockets.registry';
import { SocketBuffer } from './socket-buffer';

/** Client frames are small (a resume names a few matches); ws closes larger ones with 1009 (MESSAGE_TOO_BIG). */
const MAX_CLIENT_FRAME_BYTES = 16 * 1024;
/** setTimeout's ceiling; a longer session is closed at the next reconnect's authentication. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function gatewayOptions(prefix: string): ServerOptions & { path: string } {
  return {
    path: `/${prefix}/${NOTIFICATIONS_PATH}`,
    maxPayload: MAX_CLIENT_FRAME_BYTES,
    // A browser offering subprotocols fails the handshake unless one is selected; the bearer one
    // is never echoed (response headers get logged).
    handleProtocols: (protocols) =>
      protocols.has(NOTIFICATIONS_SUBPROTOCOL) ? NOTIFICATIONS_SUBPROTOCOL : false,
  };
}

/** `Authorization: Bearer <token>`, else a `matchplane.bearer.<token>` subprotocol. */
export function bearerToken(request: IncomingMessage): string | undefined {
  const header = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (header) return header;
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',');
  const bearer = offered
    .map((protocol) => protocol.trim())
    .find((protocol) => protocol.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  return bearer?.slice(BEARER_SUBPROTOCOL_PREFIX.length) || undefined;
}

function frameText(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * `/v1/notifications`: a player's match events, live and resumed. The token is checked once the
 * socket is open (a close code is the only answer a WebSocket client can read): 4401 when it is
 * not a live session. Frames that arrive meanwhile wait for it.
 */
@Injectable()
@WebSocketGateway(gatewayOptions(ROUTE_PREFIXES[0]))
export class NotificationsGateway
  implements
    OnGatewayConnection<WebSocket>,
    OnGatewayDisconnect<WebSocket>,
    BeforeApplicationShutdown
{
  private readonly logger = new Logger('NotificationsGateway');

  constructor(
    private readonly sessions: SessionService,
    private readonly registry: PlayerSocketsRegistry,
    private readonly reader: MatchReplayReader,
    @Inject(NotificationSocketOptions) private readonly config: NotificationSocketOptions,
    private readonly playerChannels: PlayerChannelsListener,
  ) {}

  handleConnection(socket: WebSocket, request: IncomingMessage): void {
    if (!this.admitAddress(socket, request)) return;
    // Nest does not await this; a failure must end the socket, not become an unhandled rejection.
    this.accept(socket, request).catch((error: unknown) => {
      this.logger.error(`notification socket set-up failed: ${(error as Error).message}`);
      socket.terminate();
    });
  }

  /**
   * NOTIFY_MAX_SOCKETS_PER_ADDRESS, checked before the token is read: a flood of sockets from one
   * address costs no session lookups. The socket counts until it closes.
   */
  private admitAddress(socket: WebSocket, request: IncomingMessage): boolean {
    const address = clientAddress(request, this.config.API_TRUST_PROXY_HOPS);
    if (this.registry.admitAddress(address)) {
      socket.once('close', () => this.registry.addressClosed(address));
      return true;
    }
    socket.close(
      NotificationCloseCode.TOO_MANY_CONNECTIONS,
      `this address already holds ${this.config.NOTIFY_MAX_SOCKETS_PER_ADDRESS} notification sockets on this server`,
    );
    return false;
  }

  private async accept(socket: WebSocket, request: IncomingMessage): Promise<void> {
    const early: RawData[] = [];
    const accepted: { session?: NotificationSession } = {};
    socket.on('message', (data: RawData) => {
      if (accepted.session) this.receiveSafely(accepted.session, data);
      else early.push(data);
    });
    const token = bearerToken(request);
    let authenticated: Awaited<ReturnType<SessionService['authenticate']>>;
    try {
      authenticated = token ? await this.sessions.authenticate(token) : undefined;
    } catch (error) {
      this.logger.warn(`notification socket authentication failed: ${(error as Error).message}`);
      socket.close(NotificationCloseCode.SERVER_ERROR, 'authentication unavailable');
      return;
    }
    if (socket.readyState !== WebSocket.OPEN) return;
    if (!authenticated) {
      socket.close(NotificationCloseCode.UNAUTHENTICATED, 'invalid, expired or revoked session');
      return;
    }
    const buffer = new SocketBuffer(socket, {
      maxUnread: this.config.NOTIFY_SOCKET_BUFFER,
      maxBufferedBytes: this.config.NOTIFY_SOCKET_BUFFER_BYTES,
    });
    const opened = new NotificationSession(
      authenticated.playerId,
      socket,
      buffer,
      this.reader,
      this.logger,
      () => this.registry.slowConsumers.inc(),
    );
    // A revocation that arrived while the session was being read closes the socket here.
    if (!this.registry.add(socket, opened, buffer, authenticated.sessionId)) return;
    accepted.session = opened;
    // Resumes sent before this point go first, so their matches hold live events from the start.
    for (const data of early) this.receiveSafely(opened, data);
    // Told `ready` once its player's channel is subscribed: nothing published after is missed.
    await this.playerChannels.follow(authenticated.playerId);
    if (socket.readyState !== WebSocket.OPEN) return;
    opened.notify({
      type: 'ready',
      playerId: authenticated.playerId,
      bufferLimit: this.config.NOTIFY_SOCKET_BUFFER,
      heartbeatIntervalMs: this.config.NOTIFY_HEARTBEAT_INTERVAL_MS,
    });
    this.registry
      .discoverLive(opened, authenticated.playerId)
      .catch((error: Error) =>
        this.logger.warn(`reading the live matches of a new socket failed: ${error.message}`),
      );
    const expiry = setTimeout(
      () => opened.close(NotificationCloseCode.UNAUTHENTICATED, 'session expired'),
      Math.min(MAX_TIMER_MS, Math.max(0, authenticated.expiresAt.getTime() - Date.now())),
    );
    expiry.unref();
    socket.once('close', () => clearTimeout(expiry));
  }

  handleDisconnect(socket: WebSocket): void {
    const lastOfPlayer = this.registry.remove(socket);
    if (lastOfPlayer) this.playerChannels.unfollow(lastOfPlayer);
  }

  beforeApplicationShutdown(): void {
    this.registry.closeAll(NotificationCloseCode.GOING_AWAY, 'server shutting down');
  }

  /**
   * A listener that throws is an uncaught exception: the whole process, and every other socket,
   * would go down with one bad frame. Whatever slipped past the checks ends this socket only.
   */
  private receiveSafely(session: NotificationSession, data: RawData): void {
    try {
      this.receive(session, data);
    } catch (error) {
      this.logger.error(
        `notification frame handling failed: ${(error as Error)?.stack ?? String(error)}`,
      );
      session.close(NotificationCloseCode.SERVER_ERROR, 'the message could not be handled');
    }
  }

  private receive(session: NotificationSession, data: RawData): void {
    const parsed = parseClientMessage(frameText(data), this.config.API_JSON_MAX_DEPTH);
    if (!parsed.ok) {
      session.notify({
        type: 'error',
        code: NotificationErrorCode.INVALID_MESSAGE,
        message: `expected {"type":"resume","matches":{"<match id>":<revision>}}: ${parsed.problem}`,
      });
      return;
    }
    const count = Object.keys(parsed.message.matches).length;
    if (count > this.config.NOTIFY_RESUME_MAX_MATCHES) {
      session.notify({
        type: 'error',
        code: NotificationErrorCode.RESUME_TOO_LARGE,
        message: `a resume may name at most ${this.config.NOTIFY_RESUME_MAX_MATCHES} matches, not ${count}`,
      });
      return;
    }
    session.resume(parsed.message.matches);
  }
}

/** The same endpoint under the contract prefix, `/api/v1/notifications`. */
@Injectable()
@WebSocketGateway(gatewayOptions(ROUTE_PREFIXES[1]))
export class ContractNotificationsGateway extends NotificationsGateway {}
