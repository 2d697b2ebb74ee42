import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpException } from '@nestjs/common';
import type { Registry } from 'prom-client';

export type HealthProbe = () => Promise<unknown>;

/**
 * The small HTTP listener of a worker app (no Nest HTTP server): GET /health answers 200 with
 * the probe's result or 503 with its failure, GET /metrics serves the Prometheus registry.
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
      if (req.method !== 'GET') return reply(405, JSON.stringify({ message: 'only GET is served' }));
      if (path === '/health') {
        this.probe().then(
          (result) => reply(200, JSON.stringify(result)),
          (error: unknown) =>
            reply(503, JSON.stringify(error instanceof HttpException ? error.getResponse() : { status: 'error' })),
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
