import { Inject, Injectable, Logger } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { lastValueFrom, timeout } from 'rxjs';
import { RedisKeyspace } from '@matchplane/config';
import { sessionRevokedPattern, type SessionRevokedNotification } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';

export const SESSION_REVOCATIONS_CLIENT = Symbol('SESSION_REVOCATIONS_CLIENT');

/** Past this the sign-out answers anyway; the revocation itself is already committed. */
const ANNOUNCE_TIMEOUT_MS = 1_000;

/**
 * Tells every API replica (the notification fan-out listener, over the same Redis transport the
 * dispatcher's notifications use) that a session was revoked, so the notification sockets opened
 * with it are closed with 4401 wherever they are. A lost announcement is repaired when a
 * replica's subscription comes back (it re-checks every socket's session then); otherwise the
 * socket would live on until its session expires.
 */
@Injectable()
export class SessionRevocationPublisher {
  private readonly logger = new Logger(SessionRevocationPublisher.name);
  private readonly pattern: string;

  constructor(
    @Inject(SESSION_REVOCATIONS_CLIENT) private readonly client: ClientProxy,
    @Inject(RedisKeyspace) keyspace: RedisKeyspace,
  ) {
    this.pattern = sessionRevokedPattern(keyspace.REDIS_KEY_PREFIX);
  }

  async announce(session: AuthenticatedSession): Promise<void> {
    const notification: SessionRevokedNotification = { sessionId: session.sessionId };
    try {
      await lastValueFrom(
        this.client.emit(this.pattern, notification).pipe(timeout(ANNOUNCE_TIMEOUT_MS)),
        { defaultValue: undefined },
      );
    } catch (error) {
      this.logger.warn(
        `could not announce the revocation of session ${session.sessionId}: ${(error as Error).message}`,
      );
    }
  }
}
