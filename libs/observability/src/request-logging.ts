import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
// nestjs-pino's Logger reads the request's logger from this store; its index does not export it.
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger as Pino } from 'pino';
import { pinoHttp, type HttpLogger, type ReqId } from 'pino-http';

/** Health probes and scrapes every few seconds would drown the request log. */
const UNLOGGED_GET_ROUTES = new Set(['/health', '/live', '/metrics']);

/** pino-http's own level for its "request completed" line. */
const REQUEST_LINE_LEVEL = 'info';

const MAX_REQUEST_ID = 2147483647;

/** pino-http over the app's logger, and the request ids of both ways of binding a request. */
export class RequestLog {
  readonly http: HttpLogger;
  private lastId = 0;

  constructor(readonly logger: Pino) {
    this.http = pinoHttp({
      logger,
      genReqId: (request) => this.idOf(request),
      // One short line a request: what was asked and how it was answered, never every
      // header (1.3 KB a line); the request id ties it to the request's other lines.
      serializers: {
        req: (request: IncomingMessage & { id?: unknown }) => ({
          id: request.id,
          method: request.method,
          url: request.url,
        }),
        res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
      },
    });
  }

  /** The request's id, given on first asking (pino-http's scheme: a counter from 1). */
  idOf(request: IncomingMessage): ReqId {
    // pino-http types it as always set; it is undefined until the request gets one.
    const given = request.id as ReqId | undefined;
    if (given !== undefined) return given;
    this.lastId = (this.lastId + 1) & MAX_REQUEST_ID;
    request.id = this.lastId;
    return request.id;
  }
}

/**
 * The request's logger for nestjs-pino's Logger (lines written while a request is handled carry its
 * id, method and url), made only when a line asks for it: pino's child serializes and redacts its
 * bindings on creation, work for nothing on the many requests that write no line.
 */
function lazyRequestStore(requestLog: RequestLog, request: FastifyRequest): Store {
  let logger: Pino | undefined;
  return {
    get logger(): Pino {
      logger ??= requestLog.http.logger.child({ req: request.raw });
      return logger;
    },
    set logger(assigned: Pino) {
      logger = assigned;
    },
  };
}

/**
 * The request log and request-bound lines of nestjs-pino, in a Fastify hook rather than Nest
 * middleware: through @fastify/middie and Nest's middleware layer, and with pino-http's per-request
 * child logger and response listeners even where the level drops its line, that cost 6 % of the
 * API's CPU under heartbeats. pino-http runs when its line would be written; otherwise the request
 * gets its id and a logger made on first use.
 */
export function logRequests(app: NestFastifyApplication): void {
  const requestLog = app.get(RequestLog);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      if (request.method === 'GET' && UNLOGGED_GET_ROUTES.has(request.routeOptions.url ?? '')) {
        return done();
      }
      if (requestLog.logger.isLevelEnabled(REQUEST_LINE_LEVEL)) {
        requestLog.http(request.raw, reply.raw);
        return storage.run(new Store(request.raw.log), done);
      }
      requestLog.idOf(request.raw);
      storage.run(lazyRequestStore(requestLog, request), done);
    });
}
