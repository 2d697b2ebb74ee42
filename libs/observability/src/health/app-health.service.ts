import { Injectable } from '@nestjs/common';
import {
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { RedisHealthIndicator } from './redis.health';

/** The health of a service app: its PostgreSQL and Redis connections. */
@Injectable()
export class AppHealthService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly postgres: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  /** Resolves with the result when healthy; rejects with a ServiceUnavailableException otherwise. */
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.postgres.pingCheck('postgres', { timeout: 1_000 }),
      () => this.redis.ping('redis'),
    ]);
  }
}
