import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import Redis from 'ioredis';
import { Counter } from 'prom-client';
import type { ApiConfig } from '../api.config';
import { MetricsRegistry } from '@matchplane/observability';
import { apiThrottlers, RateLimitGuard } from './rate-limit.guard';
import { FailOpenRedisThrottlerStorage } from './rate-limit.storage';

/**
 * Abuse limits on every HTTP route (@nestjs/throttler, counted in the process's Redis so they hold
 * across replicas): what each route counts against is its RateLimit scopes, the limits are
 * ApiConfig's API_RATE_LIMIT_* (rate-limit.guard.ts).
 */
@Module({})
export class ThrottlingModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: ThrottlingModule,
      imports: [
        ThrottlerModule.forRootAsync({
          inject: [Redis, MetricsRegistry],
          useFactory: (redis: Redis, registry: MetricsRegistry) => ({
            throttlers: apiThrottlers(config),
            storage: new FailOpenRedisThrottlerStorage(
              redis,
              new Counter({
                name: 'api_rate_limit_uncounted_total',
                help: 'Requests let through uncounted because Redis did not answer the rate-limit count',
                registers: [registry],
              }),
            ),
            // Retry-After on a refusal only; the library's per-limit X-RateLimit-* headers would
            // name our internal limits.
            setHeaders: false,
          }),
        }),
      ],
      providers: [{ provide: APP_GUARD, useClass: RateLimitGuard }],
    };
  }
}
