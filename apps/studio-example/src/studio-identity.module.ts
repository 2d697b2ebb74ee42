import { createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Module } from '@nestjs/common';
import {
  InvalidCredentialError,
  PlayerIdentityVerifier,
  type PlayerIdentity,
} from '@matchplane/players';

/*
 * Example (docs/EXTENDING.md): a studio's own player identity. Its backend hands each signed-in
 * account a short-lived "studio ticket" (account id and expiry, HMAC-signed with a secret the
 * studio shares with Matchplane); players send it as `{provider: "studio", credential}`.
 */

export const STUDIO_TICKET_SECRET = Symbol('STUDIO_TICKET_SECRET');

/** The studio's service the verifier depends on, provided by the studio's own module. */
@Injectable()
export class StudioTickets {
  constructor(@Inject(STUDIO_TICKET_SECRET) private readonly secret: Buffer) {}

  issue(accountId: string, expiresAt: Date): string {
    const body = Buffer.from(JSON.stringify({ accountId, exp: expiresAt.getTime() })).toString(
      'base64url',
    );
    return `${body}.${this.mac(body)}`;
  }

  /** The account id of a valid, unexpired ticket, or undefined. */
  read(ticket: string, now: Date): string | undefined {
    const [body, mac] = ticket.split('.');
    if (!body || !mac) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      accountId?: unknown;
      exp?: unknown;
    };
    if (
      typeof claims.accountId !== 'string' ||
      typeof claims.exp !== 'number' ||
      claims.exp <= now.getTime()
    )
      return undefined;
    return claims.accountId;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}

@Injectable()
export class StudioIdentityVerifier extends PlayerIdentityVerifier {
  readonly provider = 'studio';

  constructor(private readonly tickets: StudioTickets) {
    super();
  }

  verify(credential: string | undefined): Promise<PlayerIdentity> {
    const accountId =
      credential === undefined ? undefined : this.tickets.read(credential, new Date());
    if (accountId === undefined) {
      return Promise.reject(
        new InvalidCredentialError('the studio ticket is missing, forged or expired'),
      );
    }
    return Promise.resolve({ kind: 'external', provider: 'studio', subject: accountId });
  }
}

/** The studio's module: what its verifier needs. */
@Module({
  providers: [
    StudioTickets,
    {
      provide: STUDIO_TICKET_SECRET,
      useValue: Buffer.from('studio-shared-secret-for-the-example-only'),
    },
  ],
  exports: [StudioTickets],
})
export class StudioIdentityModule {}
