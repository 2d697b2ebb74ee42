import { Controller, Get, Logger } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Writable } from 'node:stream';
import type { LoggingConfig } from '@matchplane/config';
import { createAppPino, PinoBootLogger } from './app-logger';
import { LoggingModule, useAppLogger } from './logging.module';
import { logRequests } from './request-logging';

/** A pino destination that keeps every line, parsed. */
function memory(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

const config = (level: LoggingConfig['LOG_LEVEL']): LoggingConfig => ({
  LOG_LEVEL: level,
  LOG_FORMAT: 'json',
});

@Controller()
class PingController {
  private readonly logger = new Logger('Ping');

  @Get('ping')
  ping(): { ok: boolean } {
    return { ok: true };
  }

  @Get('warn')
  async warn(): Promise<{ ok: boolean }> {
    await Promise.resolve();
    this.logger.warn('something to look at');
    return { ok: true };
  }

  @Get('health')
  health(): { ok: boolean } {
    return { ok: true };
  }
}

/** An app with the logging of `level`, its lines kept in memory; `run` gets its inject. */
async function withLoggingApp(
  level: LoggingConfig['LOG_LEVEL'],
  run: (app: NestFastifyApplication) => Promise<unknown>,
): Promise<Record<string, unknown>[]> {
  const { stream, lines } = memory();
  const moduleRef = await Test.createTestingModule({
    imports: [LoggingModule.forRoot(config(level), 'api', stream)],
    controllers: [PingController],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), {
    logger: false,
  });
  useAppLogger(app);
  logRequests(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  try {
    await run(app);
  } finally {
    await app.close();
  }
  return lines;
}

describe('app logging', () => {
  it("keeps Nest's per-module and per-route boot lines out of info, in the same format as the rest", () => {
    const { stream, lines } = memory();
    const boot = new PinoBootLogger(createAppPino(config('info'), 'api', stream));
    boot.log('Mapped {/v1/queue/options, GET} route', 'RouterExplorer');
    boot.log('QueueModule dependencies initialized', 'InstanceLoader');
    boot.log('Starting Nest application...', 'NestFactory');
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, name: 'api', context: 'NestFactory' }),
    ]);
  });

  it('still writes the route map at debug', () => {
    const { stream, lines } = memory();
    const boot = new PinoBootLogger(createAppPino(config('debug'), 'api', stream));
    boot.log('Mapped {/v1/queue/options, GET} route', 'RouterExplorer');
    expect(lines).toEqual([
      expect.objectContaining({ level: 20, context: 'RouterExplorer', msg: expect.any(String) }),
    ]);
  });

  it('logs a request in one short line: id, method, url and status, never a header', async () => {
    const lines = await withLoggingApp('info', async (app) => {
      await app.inject({
        method: 'GET',
        url: '/ping',
        headers: { authorization: 'Bearer secret-token', 'user-agent': 'a'.repeat(500) },
      });
      await app.inject({ method: 'GET', url: '/health' });
      new Logger('Routes').log('Mapped {/ping, GET} route', 'RouterExplorer');
    });
    const requestLines = lines.filter((line) => line.msg === 'request completed');
    expect(requestLines).toEqual([
      expect.objectContaining({
        req: { id: expect.anything(), method: 'GET', url: '/ping' },
        res: { statusCode: 200 },
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-token');
    expect(JSON.stringify(lines)).not.toContain('user-agent');
    expect(lines.some((line) => line.context === 'RouterExplorer')).toBe(false);
  });

  it("binds a request's lines to it where the level drops the request line", async () => {
    const lines = await withLoggingApp('warn', async (app) => {
      await app.inject({ method: 'GET', url: '/ping' });
      await app.inject({ method: 'GET', url: '/warn' });
    });
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'something to look at',
        req: { id: expect.anything(), method: 'GET', url: '/warn' },
      }),
    ]);
  });
});
