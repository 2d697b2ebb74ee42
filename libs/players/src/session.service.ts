import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { runInTransaction } from '@matchplane/persistence';
import {
  InvalidCredentialError,
  PLAYER_IDENTITY_VERIFIERS,
  type PlayerIdentity,
  type PlayerIdentityVerifier,
} from './player-identity.verifier';
import { PlayerStore } from './player.store';
import {
  DEVICE_SECRET_PREFIX,
  isSecretShape,
  newSecret,
  secretHash,
  SESSION_TOKEN_PREFIX,
} from './session-token';
import { SessionStore, type AuthenticatedSession } from './session.store';

export const SESSION_OPTIONS = Symbol('SESSION_OPTIONS');
export interface SessionOptions {
  readonly ttlSeconds: number;
}

/** No verifier is registered under the requested provider name. */
export class UnknownIdentityProviderError extends CodedError<
  typeof ErrorCode.UNKNOWN_IDENTITY_PROVIDER
> {
  override name = 'UnknownIdentityProviderError';
  constructor(
    readonly provider: string,
    readonly known: readonly string[],
  ) {
    super(
      ErrorCode.UNKNOWN_IDENTITY_PROVIDER,
      `unknown identity provider "${provider}"; this service accepts ${known.join(', ')}`,
    );
  }
}

export interface IssuedSession {
  readonly token: string;
  readonly expiresAt: Date;
  readonly playerId: string;
  readonly deviceSecret?: string;
}

/** Sessions: identity verified by a pluggable verifier, then an opaque token kept as a hash. */
@Injectable()
export class SessionService {
  private readonly verifiers: ReadonlyMap<string, PlayerIdentityVerifier>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly players: PlayerStore,
    private readonly sessions: SessionStore,
    @Inject(PLAYER_IDENTITY_VERIFIERS) verifiers: PlayerIdentityVerifier[],
    @Inject(SESSION_OPTIONS) private readonly options: SessionOptions,
  ) {
    this.verifiers = new Map(verifiers.map((verifier) => [verifier.provider, verifier]));
  }

  providers(): string[] {
    return [...this.verifiers.keys()];
  }

  async create(
    provider: string,
    credential: string | undefined,
    now = new Date(),
  ): Promise<IssuedSession> {
    const verifier = this.verifiers.get(provider);
    if (!verifier) throw new UnknownIdentityProviderError(provider, this.providers());
    const identity = await verifier.verify(credential);
    const token = newSecret(SESSION_TOKEN_PREFIX);
    const expiresAt = new Date(now.getTime() + this.options.ttlSeconds * 1000);
    return runInTransaction(this.dataSource, async (manager) => {
      const { playerId, deviceSecret } = await this.resolvePlayer(manager, identity);
      await this.sessions.create(manager, playerId, secretHash(token), expiresAt);
      return { token, expiresAt, playerId, ...(deviceSecret ? { deviceSecret } : {}) };
    });
  }

  /** The session a bearer token belongs to, if it is live; shape-checked before any lookup. */
  async authenticate(token: string, now = new Date()): Promise<AuthenticatedSession | undefined> {
    if (!isSecretShape(token, SESSION_TOKEN_PREFIX)) return undefined;
    return this.sessions.authenticate(secretHash(token), now);
  }

  /** Which of these sessions are still live: for holders of long-lived connections to re-check. */
  liveSessionIds(sessionIds: readonly string[], now = new Date()): Promise<Set<string>> {
    return this.sessions.liveAmong(sessionIds, now);
  }

  revoke(session: AuthenticatedSession, now = new Date()): Promise<void> {
    return this.sessions.revoke(session.sessionId, now);
  }

  private async resolvePlayer(
    manager: Parameters<PlayerStore['createGuest']>[0],
    identity: PlayerIdentity,
  ): Promise<{ playerId: string; deviceSecret?: string }> {
    switch (identity.kind) {
      case 'new-guest': {
        const deviceSecret = newSecret(DEVICE_SECRET_PREFIX);
        return {
          playerId: await this.players.createGuest(manager, secretHash(deviceSecret)),
          deviceSecret,
        };
      }
      case 'device': {
        const playerId = await this.players.findByDeviceSecret(manager, identity.deviceSecretHash);
        if (!playerId) throw new InvalidCredentialError('no guest player has this device secret');
        return { playerId };
      }
      case 'external':
        return {
          playerId: await this.players.upsertExternal(manager, identity.provider, identity.subject),
        };
    }
  }
}
