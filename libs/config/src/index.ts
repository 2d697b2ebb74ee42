export * from './env-var.decorator';
export * from './load-config';
export * from './app-configs';
export * from './validators';
export * from './queue-policy';
