export * from './error-codes';
export * from './coded.error';
export * from './cli-exit-codes';
