import { ValidationPipe, type ValidationError } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { ApiError, ErrorCode } from '@matchplane/contracts';
import { ProblemFilter } from './problem.filter';

/** Flattens class-validator errors (nested DTOs included) into per-field problems. */
export function fieldProblems(
  errors: ValidationError[],
  parent = '',
): { field: string; problems: string[] }[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, problems: Object.values(error.constraints) }] : [];
    return [...own, ...fieldProblems(error.children ?? [], field)];
  });
}

/**
 * Cross-cutting HTTP behaviour, shared by main.ts and in-process tests: strict DTO validation
 * (unknown fields rejected), and problem+json for every error, including Fastify's own (bad
 * JSON, oversized bodies) and unknown routes. Create the app with `bodyParser: false`: the body
 * parsers are installed here.
 */
export function configureApi(app: NestFastifyApplication): void {
  // Notifications are plain WebSockets (ws) on the same server; without this Nest would look for socket.io.
  app.useWebSocketAdapter(new WsAdapter(app));
  const filter = new ProblemFilter();
  app.useGlobalFilters(filter);
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => {
        const problems = fieldProblems(errors);
        return new ApiError(
          400,
          ErrorCode.VALIDATION_FAILED,
          problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '),
          { errors: problems },
        );
      },
    }),
  );
  const fastify = app.getHttpAdapter().getInstance();
  // JSON only. Our own parser because Nest turns Fastify's SyntaxError into a generic 400, losing
  // the MALFORMED_JSON code; an empty body reads as no body, so DTO validation names what is missing.
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch (error) {
        done(
          new ApiError(
            400,
            ErrorCode.MALFORMED_JSON,
            `The body is not valid JSON: ${(error as Error).message}`,
          ),
          undefined,
        );
      }
    },
  );
  // Stamped before body parsing and auth, so a probe's RTT excludes our own processing.
  fastify.addHook('onRequest', (request, _reply, done) => {
    (request as typeof request & { receivedAt?: number }).receivedAt = Date.now();
    done();
  });
}
