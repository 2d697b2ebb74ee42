import { SetMetadata } from '@nestjs/common';

/** Which abuse limits a route counts against (see ThrottlingModule for what each one counts). */
export const RateLimitScope = {
  /** POST /v1/sessions: per client address. */
  SESSION_CREATION: 'session-creation',
  /** Routes behind PlayerAuthGuard: per session (bearer token) and per client address. */
  PLAYER: 'player',
  /** Probe challenges: per session, on top of PLAYER. */
  PROBE_CHALLENGE: 'probe-challenge',
  /** Routes behind ServerCredentialGuard: per workload credential and server id, and per address. */
  SERVER: 'server',
  /** POST /admin/login: per client address. */
  OPERATOR_LOGIN: 'operator-login',
  /** Operator console pages (session cookie): per client address, like player and server routes. */
  OPERATOR_CONSOLE: 'operator-console',
} as const;
export type RateLimitScope = (typeof RateLimitScope)[keyof typeof RateLimitScope];

export const RATE_LIMIT_SCOPES = 'matchplane:rate-limit-scopes';

/**
 * The limits a route (or every route of a controller) counts against; a method's scopes add to
 * its controller's. A test walks every guarded route and fails on one without a scope.
 */
export const RateLimit = (...scopes: RateLimitScope[]): MethodDecorator & ClassDecorator =>
  SetMetadata(RATE_LIMIT_SCOPES, scopes);
