import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ProblemFilter } from '../../http/problem.filter';
import { CONSOLE_PATH, sessionCookie } from './console-session';
import { ConsoleLoginRequired, type ConsoleRequest } from './console.guard';
import { page } from './console.layout';
import { html } from './html';

/**
 * The console's errors as pages, not problem+json: no session goes to the login page (clearing a
 * cookie that failed verification); anything else is the API's own mapping (status, code, detail,
 * correlation id) rendered as HTML.
 */
@Catch()
export class ConsoleErrorFilter implements ExceptionFilter {
  private readonly problems = new ProblemFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<ConsoleRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof ConsoleLoginRequired) {
      if (exception.hadCookie) void reply.header('set-cookie', sessionCookie(undefined, 0, false));
      void reply.status(303).header('location', `${CONSOLE_PATH}/login`).send();
      return;
    }
    const { problem, headers } = this.problems.toProblem(exception, request);
    void reply
      .status(problem.status)
      .headers(headers)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(
        page({
          title: problem.title,
          session: request.consoleSession,
          body: html`<p class="error">${problem.detail ?? problem.title}</p>
            <p class="muted">
              ${problem.code}${problem.correlationId ? ` · correlation id ${problem.correlationId}` : ''}
            </p>
            <p><a href="/admin">Back to the console</a></p>`,
        }),
      );
  }
}
