import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { ServerRedis } from '@nestjs/microservices';
import type Redis from 'ioredis';
import { NotificationFanoutOptions } from './notification.options';
import {
  isStateNotification,
  notificationPattern,
  sessionRevokedPattern,
  type SessionRevokedNotification,
} from '@matchplane/contracts';
import { redisTransportOptions, TopologyServerRedis } from '@matchplane/persistence';
import { SessionCache } from '@matchplane/players';
import { PlayerSocketsRegistry } from './player-sockets.registry';

const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 10_000;
/**
 * How far before a lost subscription a catch-up looks for matches a socket never heard of: a row
 * committed before the outage may be published during it (the dispatcher can lag by seconds).
 */
const CATCH_UP_LOOKBACK_MS = 5 * 60_000;

/** Nest's Redis transport server, logging one line per outage (not one per reconnect attempt). */
class NotificationServer extends TopologyServerRedis {
  private down = false;

  override registerErrorListener(client: Redis): void {
    client.on('error', (error: Error) => {
      if (this.down) return;
      this.down = true;
      this.logger.warn(`notification subscription lost (${error.message}); reconnecting`);
    });
    client.on('ready', () => (this.down = false));
  }
}

/**
 * Every API replica's end of the dispatcher's client notifications: a @nestjs/microservices
 * Redis transport server subscribed to `${prefix}.notifications`, handing each event to the
 * sockets of its participants on this replica. The same server hears session revocations
 * (`${prefix}.sessions.revoked`, announced by whichever replica signed the session out) and closes
 * that session's sockets here.
 *
 * The server is owned here rather than attached with connectMicroservice + @EventPattern: the
 * pattern carries the deployment's key prefix, known only once config is loaded (decorator
 * patterns are fixed at import), and owning it keeps main.ts and the in-process test app alike.
 * The transport is the dispatcher's own (same channel, same packet), not a second protocol.
 */
@Injectable()
export class NotificationFanoutListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(NotificationFanoutListener.name);
  private readonly pattern: string;
  private readonly revokedPattern: string;
  private server: NotificationServer | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly bootedAt = new Date();

  constructor(
    @Inject(NotificationFanoutOptions) private readonly config: NotificationFanoutOptions,
    private readonly sockets: PlayerSocketsRegistry,
    // Absent where only the notification path is built (its tests): nothing to keep in step.
    @Optional() private readonly sessionCache?: SessionCache,
  ) {
    this.pattern = notificationPattern(config.REDIS_KEY_PREFIX);
    this.revokedPattern = sessionRevokedPattern(config.REDIS_KEY_PREFIX);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.sessionCache?.subscriptionLost();
    clearTimeout(this.retry);
    await this.server?.close();
  }

  /**
   * Subscribes; if Redis is not there yet, the API serves anyway and retries with backoff (the
   * transport does not retry a first connection), and sockets catch up once it is subscribed.
   */
  private async start(attempt: number): Promise<void> {
    const server = this.createServer();
    try {
      await new Promise<void>((resolve, reject) =>
        server.listen((error?: unknown) => (error ? reject(toError(error)) : resolve())),
      );
      // listen() resolves before its SUBSCRIBE is answered; a second one (a no-op for Redis) on
      // the same connection resolves after it, so events committed after boot are never missed.
      const [, subscriber] = server.unwrap<[Redis, Redis]>();
      await subscriber.subscribe(this.pattern, this.revokedPattern);
      this.server = server;
      this.sessionCache?.subscriptionLive();
      this.watch(subscriber);
      if (attempt > 0) this.restored(this.bootedAt);
    } catch (error) {
      disconnect(server);
      if (this.stopped) return;
      const delayMs = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
      if (attempt === 0) {
        this.logger.warn(
          `cannot subscribe to ${this.pattern} (${(error as Error).message}); sockets get no live events until it can, retrying`,
        );
      }
      this.retry = setTimeout(() => void this.start(attempt + 1), delayMs);
    }
  }

  private createServer(): NotificationServer {
    const server = new NotificationServer(
      redisTransportOptions(this.config, `${this.config.REDIS_KEY_PREFIX}:api-notifications`),
    );
    server.addHandler(this.pattern, (data: unknown) => Promise.resolve(this.receive(data)), true);
    server.addHandler(
      this.revokedPattern,
      (data: unknown) => Promise.resolve(this.revoked(data)),
      true,
    );
    return server;
  }

  /** Pub/sub keeps nothing for a disconnected subscriber: after an outage, fill in from history. */
  private watch(subscriber: Redis): void {
    let lostAt: Date | undefined;
    subscriber.on('close', () => {
      lostAt ??= new Date();
      // Revocations announced from now on go unheard: cached sessions can no longer be trusted.
      this.sessionCache?.subscriptionLost();
    });
    subscriber.on('ready', () => {
      if (!lostAt) return;
      const since = lostAt;
      lostAt = undefined;
      subscriber.subscribe(this.pattern, this.revokedPattern).then(
        () => {
          this.sessionCache?.subscriptionLive();
          this.restored(since);
        },
        (error: Error) => this.logger.warn(`resubscribing failed: ${error.message}`),
      );
    });
  }

  private restored(lostAt: Date): void {
    this.logger.warn(`subscribed to ${this.pattern} again; sockets catch up from history`);
    this.sockets
      .catchUpAll(new Date(lostAt.getTime() - CATCH_UP_LOOKBACK_MS))
      .catch((error: Error) => this.logger.warn(`catching up failed: ${error.message}`));
    // Revocations announced meanwhile were lost with the subscription.
    this.sockets
      .closeEndedSessions()
      .catch((error: Error) => this.logger.warn(`re-checking sessions failed: ${error.message}`));
  }

  private revoked(data: unknown): void {
    const sessionId = (data as Partial<SessionRevokedNotification> | null)?.sessionId;
    if (typeof sessionId !== 'string') {
      this.logger.warn(`ignored a malformed revocation on ${this.revokedPattern}`);
      return;
    }
    this.sessionCache?.revoked(sessionId);
    this.sockets.sessionRevoked(sessionId);
  }

  private receive(data: unknown): void {
    if (!isStateNotification(data)) {
      this.logger.warn(`ignored a malformed notification on ${this.pattern}`);
      return;
    }
    this.sockets.fanOut(data);
  }
}

/** Drops a server whose first connection failed (close() would wait on its offline queue). */
function disconnect(server: ServerRedis): void {
  try {
    for (const client of server.unwrap<Redis[]>()) client.disconnect();
  } catch {
    // It never created its clients.
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
