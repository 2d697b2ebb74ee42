import { pickVariables, RedisConnectionConfig } from '@matchplane/config';
import type { ApiConfig } from '../api.config';

/**
 * What the notification sockets read of ApiConfig, as a DI token of its own (an ApiConfig
 * satisfies it too).
 */
export abstract class NotificationSocketOptions {
  abstract readonly NOTIFY_SOCKET_BUFFER: number;
  abstract readonly NOTIFY_SOCKET_BUFFER_BYTES: number;
  abstract readonly NOTIFY_HEARTBEAT_INTERVAL_MS: number;
  abstract readonly NOTIFY_RESUME_MAX_MATCHES: number;
  abstract readonly NOTIFY_MAX_SOCKETS_PER_SESSION: number;
  abstract readonly NOTIFY_MAX_SOCKETS_PER_ADDRESS: number;
  abstract readonly API_JSON_MAX_DEPTH: number;
  abstract readonly API_TRUST_PROXY_HOPS: number;

  static of(config: ApiConfig): NotificationSocketOptions {
    return pickVariables(config, [
      'NOTIFY_SOCKET_BUFFER',
      'NOTIFY_SOCKET_BUFFER_BYTES',
      'NOTIFY_HEARTBEAT_INTERVAL_MS',
      'NOTIFY_RESUME_MAX_MATCHES',
      'NOTIFY_MAX_SOCKETS_PER_SESSION',
      'NOTIFY_MAX_SOCKETS_PER_ADDRESS',
      'API_JSON_MAX_DEPTH',
      'API_TRUST_PROXY_HOPS',
    ]);
  }
}

/** The Redis the fan-out listener subscribes on, and the deployment's key prefix. */
export abstract class NotificationFanoutOptions extends RedisConnectionConfig {
  abstract readonly REDIS_KEY_PREFIX: string;

  static override of(config: ApiConfig): NotificationFanoutOptions {
    return Object.freeze({
      ...RedisConnectionConfig.of(config),
      ...pickVariables(config, ['REDIS_KEY_PREFIX']),
    });
  }
}
