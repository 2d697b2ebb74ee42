export * from './sdk.errors';
export { ApiEndpoints, type ApiEndpointsInput } from './api-endpoints';
export { type FetchLike, type RetryOptions } from './http.transport';
export * from './player-client';
export * from './server-client';
export * from './server-heartbeats';
export * from './notification-subscriber';
export * from './game-connection';
export {
  MAX_PROBE_SAMPLES,
  DEFAULT_RECORD_WITHIN_MS,
  httpProbeEdge,
  installEdgePost,
  type EdgePost,
  type EdgeReply,
} from './edge-probe';
export * from './ready-check';
export { LobbyCalls } from './player-lobbies';
export { AvoidListCalls } from './player-avoids';
export * from './match-play';
export {
  browserWebSocket,
  defaultWebSocket,
  installWebSocket,
  type SdkSocket,
  type SdkSocketEvents,
  type SdkSocketRequest,
  type WebSocketConnector,
} from './web-socket';
