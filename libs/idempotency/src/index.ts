export * from './idempotency.store';
export * from './idempotency.module';
export * from './idempotency.retention';
