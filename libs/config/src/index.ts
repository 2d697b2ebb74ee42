export * from './env-var.decorator';
export * from './load-config';
export * from './logging.config';
export * from './database.config';
export * from './service.config';
export * from './validators';
export * from './queue-policy';
export * from './queue-attributes';
