import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { PublicRoute } from '@matchplane/routing';
import type { HealthCheckResult } from '@nestjs/terminus';
import { MetricsRegistry } from '../metrics.registry';
import { AppHealthService } from './app-health.service';

/** Ops routes of the API process, outside the versioned contract (and its OpenAPI document). */
@ApiExcludeController()
@PublicRoute(
  'health checks and metrics scrapers carry no credentials; bind them to a private network',
)
@Controller()
export class HealthController {
  constructor(
    private readonly health: AppHealthService,
    @Inject(MetricsRegistry) private readonly metrics: MetricsRegistry,
  ) {}

  @Get('health')
  check(): Promise<HealthCheckResult> {
    return this.health.check();
  }

  /** Liveness: the process answers; PostgreSQL and Redis are /health's business (readiness). */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.metrics();
  }
}
