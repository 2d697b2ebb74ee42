import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import {
  MATCHER_SHARD_PLAN,
  matcherShardPlan,
  QueueWaitEstimateWindow,
  TicketHeartbeatTimeout,
  type ServiceConfig,
  type WorkerConfig,
} from '@matchplane/config';
import { PersistenceModule, RedisModule, type DataSourceExtras } from '@matchplane/persistence';
import { LifecycleLogger } from './lifecycle.logger';
import { LoggingModule } from './logging.module';
import { Tracing } from './tracing/tracing';
import { MetricsRegistry } from './metrics.registry';
import { AppHealthService } from './health/app-health.service';
import { RedisHealthIndicator } from './health/redis.health';
import { healthEndpointProvider } from './health/health-listener';
import { HealthController } from './health/health.controller';

export interface ServiceRuntimeOptions {
  appName: string;
  persistence?: DataSourceExtras;
}

/**
 * What every service app needs: logging, PostgreSQL, Redis, metrics and a health check over both
 * connections. `forApi` serves /health and /metrics on the API's HTTP server; `forWorker` opens
 * the worker's own small listener on HEALTH_PORT.
 */
@Module({})
export class ServiceRuntimeModule {
  static forApi(config: ServiceConfig, options: ServiceRuntimeOptions): DynamicModule {
    return { ...this.base(config, options), controllers: [HealthController] };
  }

  static forWorker(config: WorkerConfig, options: ServiceRuntimeOptions): DynamicModule {
    const base = this.base(config, options);
    return {
      ...base,
      providers: [
        ...(base.providers ?? []),
        healthEndpointProvider(AppHealthService, config.HEALTH_HOST, config.HEALTH_PORT),
      ],
    };
  }

  private static base(config: ServiceConfig, options: ServiceRuntimeOptions): DynamicModule {
    return {
      module: ServiceRuntimeModule,
      global: true,
      imports: [
        LoggingModule.forRoot(config, options.appName),
        PersistenceModule.forRoot(config, {
          applicationName: options.appName,
          ...options.persistence,
        }),
        RedisModule.forRoot(config, options.appName),
        TerminusModule.forRoot({ logger: false }),
      ],
      providers: [
        { provide: MetricsRegistry, useValue: new MetricsRegistry(options.appName) },
        // Narrow options the libraries inject, never a whole config class.
        { provide: TicketHeartbeatTimeout, useValue: TicketHeartbeatTimeout.of(config) },
        { provide: QueueWaitEstimateWindow, useValue: QueueWaitEstimateWindow.of(config) },
        // The candidate projection's writers and the matcher's passes share one plan.
        { provide: MATCHER_SHARD_PLAN, useValue: matcherShardPlan(config) },
        { provide: Tracing, useFactory: () => new Tracing(options.appName, config) },
        RedisHealthIndicator,
        AppHealthService,
        LifecycleLogger,
      ],
      exports: [
        MetricsRegistry,
        AppHealthService,
        LoggingModule,
        TicketHeartbeatTimeout,
        QueueWaitEstimateWindow,
        MATCHER_SHARD_PLAN,
      ],
    };
  }
}
