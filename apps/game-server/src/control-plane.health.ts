import { Inject, Injectable } from '@nestjs/common';
import {
  HealthCheckService,
  HealthIndicatorService,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { GameServerConfig } from './game-server.config';

/**
 * The game server holds no database or Redis credentials; its one dependency is the
 * control-plane API, whose own /health covers PostgreSQL and Redis, so that is what it reports.
 */
@Injectable()
export class ControlPlaneHealth {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(GameServerConfig) private readonly config: GameServerConfig,
  ) {}

  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.pingApi()]);
  }

  private async pingApi() {
    const session = this.indicators.check('matchplane-api');
    const url = new URL('/health', this.config.MATCHPLANE_API_URL);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      return response.ok
        ? session.up()
        : session.down({ message: `GET ${url.pathname} answered ${response.status}` });
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }
}
