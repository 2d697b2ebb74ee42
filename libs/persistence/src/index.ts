export * from './backoff';
export * from './data-source';
export * from './transaction.runner';
export * from './persistence.module';
export * from './redis.module';
export * from './migrator';
export * from './audit/audit.module';
export * from './audit/audit.writer';
