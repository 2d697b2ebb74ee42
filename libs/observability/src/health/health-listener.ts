import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HttpException,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type Provider,
  type Type,
} from '@nestjs/common';
import type { Registry } from 'prom-client';
import { MetricsRegistry } from '../metrics.registry';

export type HealthProbe = () => Promise<unknown>;

/** The answer of GET /live. */
const LIVE_BODY = JSON.stringify({ status: 'ok' });

/**
 * The small HTTP listener of a worker app (no Nest HTTP server): GET /health answers 200 with
 * the probe's result or 503 with its failure (readiness), GET /live answers 200 whenever the
 * process can answer at all (liveness: it never looks at PostgreSQL or Redis, so an outage of
 * either does not get the app restarted), GET /metrics serves the Prometheus registry.
 */
export class HealthListener {
  private server?: Server;

  constructor(
    private readonly probe: HealthProbe,
    private readonly metrics: Registry,
  ) {}

  async listen(host: string, port: number): Promise<AddressInfo> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const reply = (status: number, body: string, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type }).end(body);
      };
      if (req.method !== 'GET')
        return reply(405, JSON.stringify({ message: 'only GET is served' }));
      if (path === '/live') return reply(200, LIVE_BODY);
      if (path === '/health') {
        this.probe().then(
          (result) => reply(200, JSON.stringify(result)),
          (error: unknown) =>
            reply(
              503,
              JSON.stringify(
                error instanceof HttpException ? error.getResponse() : { status: 'error' },
              ),
            ),
        );
        return;
      }
      if (path === '/metrics') {
        this.metrics.metrics().then(
          (text) => reply(200, text, this.metrics.contentType),
          () => reply(500, JSON.stringify({ message: 'metrics unavailable' })),
        );
        return;
      }
      reply(404, JSON.stringify({ message: `no route ${path}` }));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export interface HealthCheck {
  check(): Promise<unknown>;
}

/** A {@link HealthListener} opened when the app has booted and closed when it shuts down. */
export class HealthEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly listener: HealthListener,
    private readonly host: string,
    private readonly port: number,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const address = await this.listener.listen(this.host, this.port);
    this.logger.log(`health and metrics on http://${address.address}:${address.port}/health`);
  }

  onApplicationShutdown(): Promise<void> {
    return this.listener.close();
  }
}

/** Provides the worker's health endpoint, probing `checkClass` and serving the app's metrics. */
export function healthEndpointProvider(
  checkClass: Type<HealthCheck>,
  host: string,
  port: number,
): Provider {
  return {
    provide: HealthEndpoint,
    inject: [checkClass, MetricsRegistry],
    useFactory: (health: HealthCheck, metrics: MetricsRegistry) =>
      new HealthEndpoint(new HealthListener(() => health.check(), metrics), host, port),
  };
}
