export * from './sdk.errors';
export { ApiEndpoints, type ApiEndpointsInput } from './api-endpoints';
export { type FetchLike, type RetryOptions } from './http.transport';
export * from './player-client';
export * from './server-client';
export * from './server-heartbeats';
export * from './notification-subscriber';
export * from './game-connection';
export * from './ready-check';
