import { redisKeyPrefix } from '@matchplane/config';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ALLOCATION_QUEUE, ALLOCATION_RELEASE_QUEUE } from '@matchplane/allocation';
import { ApiConfig } from '../../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { bullConnection } from '@matchplane/persistence';
import { CONSOLE_COOKIE, CONSOLE_PATH, ConsoleSessions, cookieValue } from './console-session';

export const QUEUE_BOARD_PATH = `${CONSOLE_PATH}/queues`;

/**
 * The BullMQ queues that exist (outbox delivery does not use BullMQ: see
 * docs/architecture/delivery.md): allocation jobs from the dispatcher's allocation trigger, release jobs from the
 * maintenance reconciler.
 */
const BOARD_QUEUES = [ALLOCATION_QUEUE, ALLOCATION_RELEASE_QUEUE];

/**
 * Bull Board ships its own styles: it gets them from the API like everything else, never from a
 * font CDN (helmet's default style-src allows any https: origin).
 */
const BOARD_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/**
 * What the console needs from Fastify beyond Nest's routes: form bodies (application/x-www-form-
 * urlencoded, accepted on console paths only; every other route stays JSON-only), and Bull Board
 * (@bull-board/fastify) mounted under the console's session check. Bull Board's own mutations
 * (retry, clean) are JSON requests: a cross-site page cannot send one without a CORS preflight the
 * API never grants, and the SameSite=Strict cookie is not sent cross-site anyway.
 */
@Injectable()
export class ConsoleHttpSetup implements OnModuleInit, OnModuleDestroy {
  private readonly queues: Queue[];
  private readonly logger = new Logger('OperatorConsole');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly sessions: ConsoleSessions,
    @Inject(ApiConfig) config: ApiConfig,
  ) {
    this.queues = BOARD_QUEUES.map(
      (name) =>
        new Queue(name, { connection: bullConnection(config), prefix: redisKeyPrefix(config) }),
    );
  }

  async onModuleInit(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (request, body, done) => {
        if (!request.url.startsWith(`${CONSOLE_PATH}/`)) {
          return done(
            new CodedError(
              ErrorCode.UNSUPPORTED_MEDIA_TYPE,
              'This route accepts application/json only',
            ),
            undefined,
          );
        }
        const text = typeof body === 'string' ? body : body.toString('utf8');
        done(null, Object.fromEntries(new URLSearchParams(text)));
      },
    );

    // Loaded here, not at import: @fastify/static (its dependency) requires an ES module, which
    // Node >= 20.19 does and Jest's CommonJS runtime cannot; in-process tests run without the board.
    let BullBoardAdapter: typeof import('@bull-board/fastify').FastifyAdapter;
    try {
      ({ FastifyAdapter: BullBoardAdapter } = await import('@bull-board/fastify'));
    } catch (error) {
      this.logger.warn(`Bull Board not mounted: ${(error as Error).message.split('\n')[0]}`);
      return;
    }
    const board = new BullBoardAdapter();
    board.setBasePath(QUEUE_BOARD_PATH);
    createBullBoard({
      queues: this.queues.map((queue) => new BullMQAdapter(queue)),
      serverAdapter: board,
      options: { uiConfig: { boardTitle: 'Matchplane queues' } },
    });
    void fastify.register(
      async (scope: FastifyInstance) => {
        scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
          const session = this.sessions.verify(cookieValue(request.headers.cookie, CONSOLE_COOKIE));
          if (!session) return reply.status(303).header('location', `${CONSOLE_PATH}/login`).send();
        });
        scope.addHook('onSend', async (_request, reply, payload) => {
          void reply
            .header('content-security-policy', BOARD_CSP)
            .header('cache-control', 'no-store');
          return payload;
        });
        await scope.register(board.registerPlugin());
      },
      { prefix: QUEUE_BOARD_PATH },
    );
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
  }
}
