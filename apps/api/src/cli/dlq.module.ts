import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ServiceConfig } from '@matchplane/config';
import { DeadLetterToolsModule } from '../admin/dead-letter-tools.module';
import type { DlqConfig } from './dlq.config';

/**
 * A Redis connection for the relay's wake-up only: it connects on the first publish and gives up
 * after one failure, since a lost wake-up costs one relay polling interval.
 */
function wakeUpConnection(config: DlqConfig): Redis {
  const redis = new Redis({
    host: config.REDIS_HOST,
    port: config.REDIS_PORT,
    password: config.REDIS_PASSWORD,
    connectionName: 'matchplane-dlq',
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  return redis;
}

class WakeUpCloser implements OnApplicationShutdown {
  constructor(@Inject(Redis) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'wait') return this.redis.disconnect();
    // quit() lets a queued wake-up publish go out first.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** What the services expect from a service app's runtime, built from a DataSource the CLI opened itself. */
@Module({})
class DlqRuntimeModule {
  static forRoot(config: DlqConfig, dataSource: DataSource): DynamicModule {
    return {
      module: DlqRuntimeModule,
      global: true,
      providers: [
        { provide: DataSource, useValue: dataSource },
        { provide: ServiceConfig, useValue: config },
        { provide: Redis, useFactory: () => wakeUpConnection(config) },
        WakeUpCloser,
      ],
      exports: [DataSource, ServiceConfig, Redis],
    };
  }
}

/** The CLI's root: the dead-letter services and nothing else (no HTTP, no logging, no health). */
@Module({})
export class DlqModule {
  static forRoot(config: DlqConfig, dataSource: DataSource): DynamicModule {
    return {
      module: DlqModule,
      imports: [DlqRuntimeModule.forRoot(config, dataSource), DeadLetterToolsModule],
    };
  }
}
