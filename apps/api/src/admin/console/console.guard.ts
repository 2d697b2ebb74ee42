import {
  createParamDecorator,
  type CanActivate,
  type ExecutionContext,
  Injectable,
} from '@nestjs/common';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { OperatorRequest } from '../operator.guard';
import { noticeOf } from './console-form';
import {
  CONSOLE_COOKIE,
  ConsoleSessions,
  cookieValue,
  type ConsoleSession,
} from './console-session';

export interface ConsoleRequest extends OperatorRequest {
  consoleSession?: ConsoleSession;
}

/** No valid session cookie: the console answers with its login page (see ConsoleErrorFilter). */
export class ConsoleLoginRequired extends Error {
  constructor(readonly hadCookie: boolean) {
    super('operator console login required');
  }
}

/** The form field every console mutation carries its CSRF token in. */
export const CSRF_FIELD = '_csrf';

/**
 * Console pages: a valid session cookie (else the login page), and on every POST the session's
 * CSRF token in the form (else 403). Records the operator for the audit trail, as OperatorGuard
 * does for bearer tokens.
 */
@Injectable()
export class ConsoleGuard implements CanActivate {
  constructor(private readonly sessions: ConsoleSessions) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    const cookie = cookieValue(request.headers.cookie, CONSOLE_COOKIE);
    const session = this.sessions.verify(cookie);
    if (!session) throw new ConsoleLoginRequired(cookie !== undefined);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const body = request.body as Record<string, unknown> | undefined;
      if (!this.sessions.csrfMatches(session, body?.[CSRF_FIELD])) {
        throw new CodedError(
          ErrorCode.FORBIDDEN,
          'This form carries no valid CSRF token; reload the page and submit it again',
        );
      }
    }
    request.operator = session.operator;
    request.consoleSession = session;
    return true;
  }
}

/** The console session {@link ConsoleGuard} verified for this request. */
export const CurrentConsoleSession = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ConsoleSession => {
    const { consoleSession } = context.switchToHttp().getRequest<ConsoleRequest>();
    // Only reachable on a route that forgot the guard: fail loudly rather than render for nobody.
    if (!consoleSession) throw new Error('console route reached without ConsoleGuard');
    return consoleSession;
  },
);

/** The notice a redirect after a console form left in the query (`?notice=`), if any. */
export const ConsoleNotice = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined =>
    noticeOf(context.switchToHttp().getRequest<ConsoleRequest>().query),
);
