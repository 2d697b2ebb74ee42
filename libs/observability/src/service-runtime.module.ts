import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { ServiceConfig, WorkerConfig } from '@matchplane/config';
import { PersistenceModule, RedisModule, type DataSourceExtras } from '@matchplane/persistence';
import { LoggingModule } from './logging.module';
import { MetricsRegistry } from './metrics.registry';
import { AppHealthService } from './health/app-health.service';
import { RedisHealthIndicator } from './health/redis.health';
import { HealthListener } from './health/health-listener';
import { HealthController } from './health/health.controller';

const WORKER_CONFIG = Symbol('WORKER_CONFIG');

class WorkerHealthListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Health');
  private readonly listener: HealthListener;

  constructor(
    health: AppHealthService,
    @Inject(MetricsRegistry) metrics: MetricsRegistry,
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
  ) {
    this.listener = new HealthListener(() => health.check(), metrics);
  }

  async onApplicationBootstrap(): Promise<void> {
    const address = await this.listener.listen(this.config.HEALTH_HOST, this.config.HEALTH_PORT);
    this.logger.log(`health and metrics on http://${address.address}:${address.port}/health`);
  }

  onApplicationShutdown(): Promise<void> {
    return this.listener.close();
  }
}

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
      providers: [...(base.providers ?? []), { provide: WORKER_CONFIG, useValue: config }, WorkerHealthListener],
    };
  }

  private static base(config: ServiceConfig, options: ServiceRuntimeOptions): DynamicModule {
    return {
      module: ServiceRuntimeModule,
      global: true,
      imports: [
        LoggingModule.forRoot(config, options.appName),
        PersistenceModule.forRoot(config, { applicationName: options.appName, ...options.persistence }),
        RedisModule.forRoot(config, options.appName),
        TerminusModule.forRoot({ logger: false }),
      ],
      providers: [
        { provide: MetricsRegistry, useValue: new MetricsRegistry(options.appName) },
        RedisHealthIndicator,
        AppHealthService,
      ],
      exports: [MetricsRegistry, AppHealthService, LoggingModule],
    };
  }
}
