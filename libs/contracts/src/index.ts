export * from './api-error';
export * from './error-codes';
export * from './notifications';
export * from './notification-protocol';
export * from './routes';
export * from './player-api';
export * from './server-api';
export * from './public-route.decorator';
