import {
  BEARER_SUBPROTOCOL_PREFIX,
  NOTIFICATIONS_PATH,
  NOTIFICATIONS_SUBPROTOCOL,
  NotificationCloseCode,
  ResyncReason,
  type ClientNotificationMessage,
  type ErrorMessage,
  type MatchEventMessage,
  type ResyncMessage,
  type ServerNotificationMessage,
} from '@matchplane/contracts';
import { ApiEndpoints, endpointUrl, type ApiEndpointsInput } from './api-endpoints';
import { defaultWebSocket, type SdkSocket, type WebSocketConnector } from './web-socket';

export interface NotificationReconnectOptions {
  /** Backoff before the first reconnect (ms); doubles with each failed one, with jitter. Default 250. */
  baseDelayMs?: number;
  /** Cap of one backoff delay (ms). Default 10_000. */
  maxDelayMs?: number;
}

export interface NotificationSubscriberOptions {
  /**
   * Where the API is served, e.g. `https://mm.example.com` (`ws(s)://.../v1/notifications` is
   * derived), or every replica of it: a connection that fails or drops is retried on the next
   * replica, resuming from the last revision seen.
   */
  baseUrl: ApiEndpointsInput;
  /**
   * The session token, or how to read the current one at every (re)connect: `() => client.token`
   * for a PlayerClient.
   */
  token: string | (() => string | undefined);
  /** Revisions already seen per match (e.g. kept from an earlier run): resumed from on connect. */
  lastSeen?: Readonly<Record<string, number>>;
  reconnect?: NotificationReconnectOptions;
  /**
   * Nothing at all from the server (not even its heartbeat ping) for this long means the
   * connection is dead: reconnect. Default 2.5 x the heartbeat interval the server announces
   * (75_000 until it has), where the platform shows pings (`ws`); a browser hides them, so there
   * the check is off unless set (the browser notices a dead connection itself).
   */
  idleTimeoutMs?: number;
  /** How sockets are opened. Default: the installed connector (see `installWebSocket`), else the platform's WebSocket. */
  webSocket?: WebSocketConnector;
}

export type NotificationConnectionEvent =
  /** The server accepted the token; events flow (after any replay). */
  | { readonly state: 'connected'; readonly playerId: string }
  /** The connection ended and will be retried after `delayMs`. */
  | {
      readonly state: 'reconnecting';
      readonly code: number;
      readonly reason: string;
      readonly delayMs: number;
    };

export interface NotificationHandlers {
  /** Every match event once, in revision order per match, without a gap. */
  onEvent(event: MatchEventMessage): void;
  /**
   * The server jumped a match to its current state: the events between are no longer retained
   * (or the client claimed a revision the server never had). Events after `revision` follow.
   */
  onResync?(resync: ResyncMessage): void;
  onConnection?(event: NotificationConnectionEvent): void;
  /** A refused client message, a socket error, or a throwing handler; the subscription goes on. */
  onError?(error: Error | ErrorMessage): void;
}

export type NotificationSubscriptionEnd =
  | { readonly reason: 'closed' }
  /** The server refused the session token (close 4401): sign in again and subscribe anew. */
  | { readonly reason: 'unauthenticated'; readonly message: string };

export interface NotificationSubscription {
  /** Resolves once the server first accepts the token; rejects if the subscription ends first. */
  readonly ready: Promise<void>;
  /** Settles (never rejects) when the subscription ends, with why. */
  readonly done: Promise<NotificationSubscriptionEnd>;
  /**
   * Also follows `matchId` from `afterRevision` (default 0: its whole history), e.g. a match
   * learnt from a ticket. Live events of the player's matches arrive without this.
   */
  follow(matchId: string, afterRevision?: number): void;
  /** The last revision delivered per match: keep it to resume in a later run. */
  lastSeen(): Record<string, number>;
  /** Ends the subscription and its connection. Idempotent. */
  close(): void;
}

/** The server's default resume bound (NOTIFY_RESUME_MAX_MATCHES); larger resumes are split. */
const RESUME_CHUNK = 20;

/**
 * A player's match notifications over the `/v1/notifications` WebSocket: connects
 * with the session token, reconnects with backoff and resumes from the last revision seen per
 * match, dedupes on (matchId, revision) and holds back anything after a gap until the server has
 * filled it, so the caller sees each match's revisions once, in order.
 */
export class NotificationSubscriber {
  private readonly endpoints: ApiEndpoints;

  constructor(private readonly options: NotificationSubscriberOptions) {
    this.endpoints = ApiEndpoints.from(options.baseUrl);
  }

  subscribe(handlers: NotificationHandlers): NotificationSubscription {
    return new Subscription(this.endpoints, this.options, handlers);
  }
}

function notificationsUrl(base: URL): string {
  const url = new URL(endpointUrl(base, `v1/${NOTIFICATIONS_PATH}`));
  url.protocol = base.protocol === 'https:' || base.protocol === 'wss:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** Closes after which the same replica is worth another try; anything else moves to the next. */
const SAME_REPLICA_CLOSES: ReadonlySet<number> = new Set([NotificationCloseCode.SLOW_CONSUMER]);

class Subscription implements NotificationSubscription {
  readonly ready: Promise<void>;
  readonly done: Promise<NotificationSubscriptionEnd>;
  private readonly seen = new Map<string, number>();
  /** Events after a gap, per match, until the server's replay fills it. */
  private readonly held = new Map<string, MatchEventMessage[]>();
  private socket: SdkSocket | undefined;
  private readonly connector: WebSocketConnector;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  private resolveReady!: () => void;
  private rejectReady!: (error: Error) => void;
  private finish!: (end: NotificationSubscriptionEnd) => void;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private idleTimeoutMs: number;

  private endpoint: URL | undefined;

  constructor(
    private readonly endpoints: ApiEndpoints,
    private readonly options: NotificationSubscriberOptions,
    private readonly handlers: NotificationHandlers,
  ) {
    for (const [matchId, revision] of Object.entries(options.lastSeen ?? {})) {
      this.seen.set(matchId, revision);
    }
    this.baseDelayMs = options.reconnect?.baseDelayMs ?? 250;
    this.maxDelayMs = options.reconnect?.maxDelayMs ?? 10_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 75_000;
    this.connector = options.webSocket ?? defaultWebSocket();
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // A caller that only awaits `done` must not see an unhandled rejection.
    this.ready.catch(() => undefined);
    this.done = new Promise<NotificationSubscriptionEnd>((resolve) => (this.finish = resolve));
    this.connect();
  }

  follow(matchId: string, afterRevision = 0): void {
    const from = Math.max(afterRevision, this.seen.get(matchId) ?? 0);
    this.seen.set(matchId, from);
    this.send({ type: 'resume', matches: { [matchId]: from } });
  }

  lastSeen(): Record<string, number> {
    return Object.fromEntries(this.seen);
  }

  close(): void {
    this.end({ reason: 'closed' });
  }

  private connect(): void {
    const token =
      typeof this.options.token === 'function' ? this.options.token() : this.options.token;
    if (!token) {
      this.end({ reason: 'unauthenticated', message: 'no session token' });
      return;
    }
    const endpoint = this.endpoints.current();
    this.endpoint = endpoint;
    const request = {
      url: notificationsUrl(endpoint),
      protocols: [NOTIFICATIONS_SUBPROTOCOL],
      bearer: { token, subprotocol: `${BEARER_SUBPROTOCOL_PREFIX}${token}` },
    };
    const socket: SdkSocket = this.connector.connect(request, {
      open: () => {
        this.touch();
        // Sent at once (the server holds it until the token is checked): what this client has.
        const entries = [...this.seen];
        for (let i = 0; i < entries.length; i += RESUME_CHUNK) {
          this.send({
            type: 'resume',
            matches: Object.fromEntries(entries.slice(i, i + RESUME_CHUNK)),
          });
        }
      },
      message: (text) => {
        this.touch();
        this.receive(text);
      },
      ping: () => this.touch(),
      error: (error) => this.report(error),
      close: (code, reason) => this.closed(socket, code, reason),
    });
    this.socket = socket;
  }

  private closed(socket: SdkSocket, code: number, reason: string): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    clearTimeout(this.idleTimer);
    if (this.ended) return;
    if (code === NotificationCloseCode.UNAUTHENTICATED) {
      this.end({ reason: 'unauthenticated', message: reason || 'session refused' });
      return;
    }
    if (this.endpoint && !SAME_REPLICA_CLOSES.has(code)) this.endpoints.failover(this.endpoint);
    const backoff = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** this.attempt);
    // Jitter spreads the reconnects of every client of a replica that went away at once.
    const delayMs = Math.round(backoff / 2 + Math.random() * (backoff / 2));
    this.attempt += 1;
    this.safely(() =>
      this.handlers.onConnection?.({ state: 'reconnecting', code, reason, delayMs }),
    );
    this.reconnectTimer = setTimeout(() => this.connect(), delayMs);
  }

  private receive(text: string): void {
    let message: ServerNotificationMessage;
    try {
      message = JSON.parse(text) as ServerNotificationMessage;
    } catch (error) {
      this.report(new Error(`unparsable notification frame: ${(error as Error).message}`));
      return;
    }
    switch (message.type) {
      case 'ready':
        this.attempt = 0;
        if (this.options.idleTimeoutMs === undefined && message.heartbeatIntervalMs > 0) {
          this.idleTimeoutMs = 2.5 * message.heartbeatIntervalMs;
          this.touch();
        }
        this.resolveReady();
        this.safely(() =>
          this.handlers.onConnection?.({ state: 'connected', playerId: message.playerId }),
        );
        return;
      case 'event':
        this.event(message);
        return;
      case 'resync':
        this.resync(message);
        return;
      case 'error':
        this.report(message);
        return;
    }
  }

  private event(event: MatchEventMessage): void {
    const last = this.seen.get(event.matchId);
    if (last !== undefined && event.revision <= last) return;
    if (last === undefined || event.revision === last + 1) {
      this.deliver(event);
      this.release(event.matchId);
      return;
    }
    // A gap: hold this back and ask for what is missing (once per gap).
    const held = this.held.get(event.matchId);
    if (held) {
      if (!held.some((other) => other.revision === event.revision)) held.push(event);
      return;
    }
    this.held.set(event.matchId, [event]);
    this.send({ type: 'resume', matches: { [event.matchId]: last } });
  }

  private resync(resync: ResyncMessage): void {
    // The socket fell behind: the server closes it next, and resuming from what was delivered
    // replays the events (a resync past retention comes back if they are gone).
    if (resync.reason === ResyncReason.BUFFER_OVERFLOW) return;
    this.seen.set(resync.matchId, resync.revision);
    this.safely(() => this.handlers.onResync?.(resync));
    this.release(resync.matchId);
  }

  /** Delivers held events that now follow on. */
  private release(matchId: string): void {
    const held = this.held.get(matchId);
    if (!held) return;
    held.sort((a, b) => a.revision - b.revision);
    while (held.length > 0) {
      const next = held[0]!;
      const last = this.seen.get(matchId) ?? 0;
      if (next.revision > last + 1) return;
      held.shift();
      if (next.revision === last + 1) this.deliver(next);
    }
    this.held.delete(matchId);
  }

  private deliver(event: MatchEventMessage): void {
    this.seen.set(event.matchId, event.revision);
    this.safely(() => this.handlers.onEvent(event));
  }

  private send(message: ClientNotificationMessage): void {
    // Not open: the next connect resumes from `seen`, which covers this.
    if (this.socket?.open) this.socket.send(JSON.stringify(message));
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    // Without pings a quiet connection looks dead: only an explicit timeout applies then.
    if (!this.connector.reportsPings && this.options.idleTimeoutMs === undefined) return;
    const socket = this.socket;
    this.idleTimer = setTimeout(() => socket?.terminate(), this.idleTimeoutMs);
  }

  private end(end: NotificationSubscriptionEnd): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.idleTimer);
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(1000, 'client closed');
    this.rejectReady(
      new Error(`notification subscription ended before it was ready (${end.reason})`),
    );
    this.finish(end);
  }

  private report(error: Error | ErrorMessage): void {
    // After close() the socket's own teardown errors are nobody's concern.
    if (this.ended) return;
    try {
      this.handlers.onError?.(error);
    } catch {
      // The caller's error handler threw; nothing is left to tell.
    }
  }

  /** A throwing handler must not break the ordering of what follows. */
  private safely(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.report(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
