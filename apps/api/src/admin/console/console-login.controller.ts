import { Body, Controller, Get, Header, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicRoute } from '@matchplane/routing';
import { RateLimit, RateLimitScope } from '../../http/rate-limit.decorator';
import { presentFields } from './console-form';
import { CONSOLE_PATH, ConsoleSessions, sessionCookie } from './console-session';
import { CONSOLE_CSS } from './console.css';
import { ConsoleErrorFilter } from './console.filter';
import { sendPage } from './console.layout';
import { loginPage } from './login.page';

/** The console's way in: the login form that trades an operator token for a session cookie, and the stylesheet. */
@ApiExcludeController()
@UseFilters(ConsoleErrorFilter)
@Controller(CONSOLE_PATH)
export class ConsoleLoginController {
  constructor(private readonly sessions: ConsoleSessions) {}

  @Get('login')
  @PublicRoute('the login form itself')
  @RateLimit(RateLimitScope.OPERATOR_CONSOLE)
  form(@Res() reply: FastifyReply): void {
    const configured = this.sessions.configured;
    sendPage(reply, loginPage({ configured }), configured ? 200 : 503);
  }

  @Post('login')
  @PublicRoute('exchanges an operator token for a console session')
  @RateLimit(RateLimitScope.OPERATOR_LOGIN)
  login(@Req() request: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply): void {
    if (!this.sessions.configured) {
      return sendPage(reply, loginPage({ configured: false }), 503);
    }
    const { token } = presentFields(body, ['token']);
    const operator = token === undefined ? undefined : this.sessions.operatorOf(token);
    if (!operator) {
      const error = 'That is not an operator token.';
      return sendPage(reply, loginPage({ configured: true, error }), 401);
    }
    void reply
      .status(303)
      .header(
        'set-cookie',
        sessionCookie(
          this.sessions.issue(operator),
          this.sessions.lifetime,
          request.protocol === 'https',
        ),
      )
      .header('location', CONSOLE_PATH)
      .send();
  }

  @Get('assets/console.css')
  @PublicRoute('a static stylesheet')
  @RateLimit(RateLimitScope.OPERATOR_CONSOLE)
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'public, max-age=3600')
  stylesheet(): string {
    return CONSOLE_CSS;
  }
}
