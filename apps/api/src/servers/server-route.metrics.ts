import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsRegistry } from '@matchplane/observability';

export type ServerRoute = 'register' | 'initial-connect' | 'result';

/** How often the game-server routes' transactions had to run again (serialization, deadlock). */
@Injectable()
export class ServerRouteMetrics {
  private readonly retries: Counter<'route' | 'sqlstate'>;

  constructor(@Inject(MetricsRegistry) registry: MetricsRegistry) {
    this.retries = new Counter({
      name: 'server_route_transaction_retries_total',
      help: 'Game-server route transactions re-run after a serialization failure or deadlock',
      labelNames: ['route', 'sqlstate'],
      registers: [registry],
    });
  }

  retried(route: ServerRoute, sqlState: string): void {
    this.retries.inc({ route, sqlstate: sqlState });
  }
}
