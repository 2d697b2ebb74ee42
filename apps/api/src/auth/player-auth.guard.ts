import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  createParamDecorator,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { SessionService, type AuthenticatedSession } from '@matchplane/players';

export interface PlayerRequest extends FastifyRequest {
  session?: AuthenticatedSession;
}

const CHALLENGE = 'Bearer realm="matchplane"';

/** Player routes: `Authorization: Bearer <session token>`; a missing, expired or revoked one is a 401. */
@Injectable()
export class PlayerAuthGuard implements CanActivate {
  constructor(private readonly sessions: SessionService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<PlayerRequest>();
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) {
      throw new CodedError(ErrorCode.UNAUTHENTICATED, 'A session bearer token is required', {
        challenge: CHALLENGE,
      });
    }
    const session = await this.sessions.authenticate(match[1]);
    if (!session) {
      throw new CodedError(
        ErrorCode.UNAUTHENTICATED,
        'The session token is invalid, expired or revoked',
        {
          challenge: CHALLENGE,
        },
      );
    }
    request.session = session;
    return true;
  }
}

/** The authenticated session of a route behind PlayerAuthGuard. */
export const CurrentSession = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedSession => {
    const session = context.switchToHttp().getRequest<PlayerRequest>().session;
    if (!session) throw new Error('CurrentSession used on a route without PlayerAuthGuard');
    return session;
  },
);

/** When the request arrived (set by configureApi's onRequest hook): the probe's receive time. */
export const ReceivedAt = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Date => {
    const request = context.switchToHttp().getRequest<FastifyRequest & { receivedAt?: number }>();
    return new Date(request.receivedAt ?? Date.now());
  },
);
