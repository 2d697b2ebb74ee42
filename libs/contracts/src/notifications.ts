/**
 * What a client is told about one delivered event. Clients dedupe on (aggregateId, revision); a
 * revision more than one above the last seen means a gap (resume from the last seen).
 */
export interface StateNotification {
  event: string;
  aggregateType: string;
  /** The match id for match events, the ticket id for ticket events, the player id for ratings. */
  aggregateId: string;
  revision: number;
  /** The state the aggregate entered; `RATED` for `rating.updated`. */
  state: string;
  /** A match's game server's region, from PROCESS_READY on (see MatchEventMessage). */
  serverRegion?: string;
  occurredAt: string;
  playerIds: string[];
}

/** Whether a published packet's data is a well-formed {@link StateNotification}. */
export function isStateNotification(data: unknown): data is StateNotification {
  if (typeof data !== 'object' || data === null) return false;
  const n = data as Record<string, unknown>;
  return (
    typeof n.event === 'string' &&
    typeof n.aggregateType === 'string' &&
    typeof n.aggregateId === 'string' &&
    typeof n.revision === 'number' &&
    Number.isSafeInteger(n.revision) &&
    n.revision >= 1 &&
    typeof n.state === 'string' &&
    (n.serverRegion === undefined || typeof n.serverRegion === 'string') &&
    typeof n.occurredAt === 'string' &&
    Array.isArray(n.playerIds) &&
    n.playerIds.every((id) => typeof id === 'string')
  );
}

/**
 * The @nestjs/microservices (Redis transport) event pattern the dispatcher emits delivered events
 * on and every API replica listens to. Prefixed so deployments (and test runs) sharing a Redis
 * stay apart.
 */
export function notificationPattern(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}.notifications`;
}

/**
 * The channel of one player's notifications (NOTIFY_FANOUT=targeted): an API replica subscribes
 * to it while it holds a socket of that player, so an event reaches only the replicas of its
 * recipients. The packet is the transport's own (`{ pattern, data }`, data a StateNotification).
 */
export function playerNotificationChannel(redisKeyPrefix: string, playerId: string): string {
  return `${notificationPattern(redisKeyPrefix)}.player.${playerId}`;
}

/** Told to every API replica when a session is revoked: it closes that session's sockets (4401). */
export interface SessionRevokedNotification {
  sessionId: string;
}

/** The Redis transport event pattern of {@link SessionRevokedNotification}s (API to API replicas). */
export function sessionRevokedPattern(redisKeyPrefix: string): string {
  return `${redisKeyPrefix}.sessions.revoked`;
}
