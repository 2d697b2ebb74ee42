export * from './logging.module';
export * from './metrics.registry';
export * from './health/app-health.service';
export * from './health/redis.health';
export * from './health/health-listener';
export * from './health/health.controller';
export * from './service-runtime.module';
export * from './bootstrap';
