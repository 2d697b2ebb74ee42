import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { edgeProblem } from './edge-problem';
import { answerRequest, challengeRequest } from './probe-edge.requests';
import { monotonicUs, ProbeEdge } from './probe-edge.service';

/** Small bodies only: a challenge echoed back is a few hundred bytes. */
export const EDGE_BODY_LIMIT_BYTES = 4_096;

const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export interface EdgeHttpOptions {
  readonly host: string;
  readonly port: number;
}

type Route =
  | { readonly methods: readonly string[]; readonly kind: 'live' }
  | { readonly methods: readonly string[]; readonly kind: ProbeRoute };

/** A challenge; an answer; an answer and, in the same reply, the next challenge (a round). */
type ProbeRoute = 'challenge' | 'answer' | 'round';

const ROUTES: Readonly<Record<string, Route>> = {
  '/live': { methods: ['GET', 'HEAD'], kind: 'live' },
  '/health': { methods: ['GET', 'HEAD'], kind: 'live' },
  '/v1/probe/challenges': { methods: ['POST'], kind: 'challenge' },
  '/v1/probe/answers': { methods: ['POST'], kind: 'answer' },
  '/v1/probe/rounds': { methods: ['POST'], kind: 'round' },
};

/**
 * The edge's HTTP side on a plain node:http server: five routes, no framework per request (Nest
 * only boots the process and owns its lifecycle). A request's receive time is stamped first thing,
 * before its body is read; a challenge is stamped and signed as the last step before its bytes are
 * written, so the RTT holds as little of this process's own work as it can.
 * Decision: docs/decisions/2026-12-06-probe-edge-plain-http.md.
 */
@Injectable()
export class EdgeHttpServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('probe-edge');
  private readonly server: Server;

  constructor(
    private readonly edge: ProbeEdge,
    private readonly options: EdgeHttpOptions,
  ) {
    // noDelay: each answer leaves in one segment at once, never held back by Nagle's algorithm.
    this.server = createServer({ noDelay: true }, (request, response) =>
      this.handle(request, response, monotonicUs()),
    );
  }

  /** The bound port (the configured one, or the one the OS chose for 0). */
  get port(): number {
    const address = this.server.address();
    return address !== null && typeof address === 'object' ? address.port : this.options.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.logger.log(
      `probe-edge ${this.edge.region} listening on http://${this.options.host}:${this.port}`,
    );
  }

  onApplicationShutdown(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private handle(request: IncomingMessage, response: ServerResponse, receivedAtUs: number): void {
    const url = request.url ?? '/';
    const path = url.split('?', 1)[0]!;
    const route = ROUTES[path];
    const method = request.method ?? 'GET';
    try {
      if (route === undefined) {
        throw new CodedError(ErrorCode.NOT_FOUND, `no route ${method} ${path} on a probe edge`);
      }
      if (!route.methods.includes(method)) {
        response.setHeader('allow', route.methods.join(', '));
        throw new CodedError(
          ErrorCode.METHOD_NOT_ALLOWED,
          `${path} answers ${route.methods.join(', ')}, not ${method}`,
        );
      }
      if (route.kind === 'live') {
        this.reply(response, 200, JSON_TYPE, { status: 'ok', region: this.edge.region });
        return;
      }
      readJsonBody(request, (error, body) => {
        if (error) this.refuse(request, response, error);
        else this.probe(route.kind, request, response, body, receivedAtUs);
      });
    } catch (error) {
      this.refuse(request, response, error);
    }
  }

  private probe(
    kind: ProbeRoute,
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
    receivedAtUs: number,
  ): void {
    try {
      if (kind === 'challenge') {
        const { playerId, region } = challengeRequest(body);
        // Stamped and signed as the last step before the bytes are handed to the socket.
        this.reply(response, 201, JSON_TYPE, this.edge.issue(playerId, region));
      } else if (kind === 'answer') {
        this.reply(response, 200, JSON_TYPE, this.edge.answer(answerRequest(body), receivedAtUs));
      } else {
        const answer = answerRequest(body);
        const measurement = this.edge.answer(answer, receivedAtUs);
        // The next challenge is issued (stamped) after the measurement is signed, last of all.
        const round = { measurement, challenge: this.edge.issue(answer.playerId, answer.region) };
        this.reply(response, 200, JSON_TYPE, round);
      }
    } catch (error) {
      this.refuse(request, response, error);
    }
  }

  private refuse(request: IncomingMessage, response: ServerResponse, error: unknown): void {
    const problem = edgeProblem(error, request.method ?? 'GET', request.url ?? '/');
    // A body left unread (too large, wrong type) would be parsed as the next request: close.
    const hasBody =
      request.headers['content-length'] !== undefined ||
      request.headers['transfer-encoding'] !== undefined;
    if (hasBody && !request.complete) response.setHeader('connection', 'close');
    this.reply(response, problem.status, PROBLEM_TYPE, problem);
  }

  private reply(response: ServerResponse, status: number, type: string, body: unknown): void {
    // A string body (not a Buffer) lets node:http send head and body in one write, not a writev.
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
    response.end(response.req.method === 'HEAD' ? undefined : text);
  }
}

/**
 * The request's JSON body: application/json only (415), at most EDGE_BODY_LIMIT_BYTES (413,
 * refused from content-length before reading when it says so), parseable (400 MALFORMED_JSON).
 */
function readJsonBody(
  request: IncomingMessage,
  done: (error: CodedError | undefined, body?: unknown) => void,
): void {
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    done(
      new CodedError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        `the body must be application/json, not ${type === '' ? 'untyped' : type}`,
      ),
    );
    return;
  }
  const tooLarge = () =>
    new CodedError(
      ErrorCode.PAYLOAD_TOO_LARGE,
      `the body may be at most ${EDGE_BODY_LIMIT_BYTES} bytes`,
    );
  if (Number(request.headers['content-length'] ?? 0) > EDGE_BODY_LIMIT_BYTES) {
    done(tooLarge());
    return;
  }
  const chunks: Buffer[] = [];
  let length = 0;
  let finished = false;
  const finish = (error: CodedError | undefined, body?: unknown) => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  request.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length > EDGE_BODY_LIMIT_BYTES) finish(tooLarge());
    else chunks.push(chunk);
  });
  request.on('end', () => {
    if (finished) return;
    const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
    if (text.trim() === '') {
      finish(new CodedError(ErrorCode.MALFORMED_JSON, 'the body is empty; send a JSON object'));
      return;
    }
    try {
      finish(undefined, JSON.parse(text) as unknown);
    } catch (error) {
      finish(
        new CodedError(
          ErrorCode.MALFORMED_JSON,
          `the body is not valid JSON: ${(error as Error).message}`,
        ),
      );
    }
  });
  // A client gone mid-body gets nothing: there is no one to answer.
  request.on('error', () => (finished = true));
}
