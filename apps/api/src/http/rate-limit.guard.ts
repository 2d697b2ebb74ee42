import { redisKeyPrefix } from '@matchplane/config';
import { hash } from 'node:crypto';
import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { ApiConfig } from '../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { MetricsRegistry } from '@matchplane/observability';
import { RATE_LIMIT_SCOPES, RateLimitScope } from './rate-limit.decorator';
import { StaticMetadataReflector } from './static-metadata.reflector';

/** IPv6 clients are counted per /64: one host usually holds a whole one. */
const IPV6_SUBNET_PREFIX = 64;

const reflector = new StaticMetadataReflector();

function scopesOf(context: ExecutionContext): readonly RateLimitScope[] {
  return reflector.getAllAndMerge(RATE_LIMIT_SCOPES, [context.getHandler(), context.getClass()]);
}

function requestOf(context: ExecutionContext): FastifyRequest {
  return context.switchToHttp().getRequest<FastifyRequest>();
}

function bearerOf(request: FastifyRequest): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
}

/**
 * Never the token itself in Redis: a digest identifies its session (or credential) as well.
 * One-shot `hash`: createHash and its Hash object cost about five times as much, on every counted request.
 */
function bearerDigest(request: FastifyRequest): string {
  return hash('sha256', bearerOf(request) ?? '', 'base64url');
}

function addressOf(request: FastifyRequest): string {
  return normalizeIp(request.ip, IPV6_SUBNET_PREFIX);
}

interface RateLimitSpec {
  /** Counted on routes with one of these scopes. */
  scopes: readonly RateLimitScope[];
  limit: number;
  /** Only requests that carry a bearer token are counted by token (the address limit sees the rest). */
  byBearer: boolean;
  tracker: (request: FastifyRequest) => string;
  /** Who went over, for the 429's detail. */
  who: string;
}

/**
 * The API's limits, in the order they are counted: a request refused by its session's limit is
 * not counted against its address, so one flooding session does not use up its neighbours' share.
 */
function rateLimitSpecs(config: ApiConfig): Record<string, RateLimitSpec> {
  return {
    'session-creation': {
      scopes: [RateLimitScope.SESSION_CREATION],
      limit: config.API_RATE_LIMIT_SESSIONS_PER_ADDRESS,
      byBearer: false,
      tracker: addressOf,
      who: 'sessions created from this address',
    },
    'probe-challenges': {
      scopes: [RateLimitScope.PROBE_CHALLENGE],
      limit: config.API_RATE_LIMIT_PROBES_PER_SESSION,
      byBearer: true,
      tracker: bearerDigest,
      who: 'probe challenges for this session',
    },
    session: {
      scopes: [RateLimitScope.PLAYER],
      limit: config.API_RATE_LIMIT_REQUESTS_PER_SESSION,
      byBearer: true,
      tracker: bearerDigest,
      who: 'requests of this session',
    },
    server: {
      scopes: [RateLimitScope.SERVER],
      limit: config.API_RATE_LIMIT_REQUESTS_PER_SERVER,
      byBearer: true,
      // The path's server id too: one credential is only ever valid for one server.
      tracker: (request) =>
        `${bearerDigest(request)}:${(request.params as { id?: string }).id ?? ''}`,
      who: 'requests of this game server',
    },
    'operator-logins': {
      scopes: [RateLimitScope.OPERATOR_LOGIN],
      limit: config.API_RATE_LIMIT_OPERATOR_LOGINS_PER_ADDRESS,
      byBearer: false,
      tracker: addressOf,
      who: 'operator console logins from this address',
    },
    address: {
      scopes: [
        RateLimitScope.PLAYER,
        RateLimitScope.SERVER,
        RateLimitScope.OPERATOR_LOGIN,
        RateLimitScope.OPERATOR_CONSOLE,
      ],
      limit: config.API_RATE_LIMIT_REQUESTS_PER_ADDRESS,
      byBearer: false,
      tracker: addressOf,
      who: 'requests from this address',
    },
  };
}

/** The @nestjs/throttler throttlers of {@link rateLimitSpecs}; a limit of 0 is none. */
export function apiThrottlers(config: ApiConfig): ThrottlerOptions[] {
  return Object.entries(rateLimitSpecs(config))
    .filter(([, spec]) => spec.limit > 0)
    .map(([name, spec]) => ({
      name,
      limit: spec.limit,
      ttl: config.API_RATE_LIMIT_WINDOW_MS,
      skipIf: (context: ExecutionContext) =>
        !scopesOf(context).some((scope) => spec.scopes.includes(scope)) ||
        (spec.byBearer && bearerOf(requestOf(context)) === undefined),
      getTracker: (request: Record<string, unknown>) =>
        spec.tracker(request as unknown as FastifyRequest),
      generateKey: (_context: ExecutionContext, tracker: string, throttler: string) =>
        `${redisKeyPrefix(config)}:rate:${throttler}:${tracker}`,
    }));
}

class RateLimitExceeded extends Error {
  constructor(readonly detail: ThrottlerLimitDetail) {
    super('rate limit exceeded');
  }
}

/**
 * @nestjs/throttler's guard over every HTTP route (WebSocket sockets are capped by the gateway):
 * routes count against the limits their {@link RateLimit} scopes name, and a request over one is
 * a 429 RATE_LIMITED problem with Retry-After (seconds until the refusing window ends).
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly specs: Record<string, RateLimitSpec>;
  private readonly refused: Counter;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    @Inject(ApiConfig) config: ApiConfig,
    @Inject(MetricsRegistry) registry: MetricsRegistry,
  ) {
    super(options, storage, reflector);
    this.specs = rateLimitSpecs(config);
    this.refused = new Counter({
      name: 'api_rate_limited_total',
      help: 'Requests refused with 429 RATE_LIMITED, by the limit they went over',
      labelNames: ['limit'],
      registers: [registry],
    });
  }

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(context.getType() !== 'http');
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    try {
      return await super.handleRequest(request);
    } catch (error) {
      if (!(error instanceof RateLimitExceeded)) throw error;
      const name = request.throttler.name ?? 'default';
      this.refused.inc({ limit: name });
      const { limit, ttl, timeToBlockExpire } = error.detail;
      const retryAfter = Math.max(1, timeToBlockExpire);
      throw new CodedError(
        ErrorCode.RATE_LIMITED,
        `Too many ${this.specs[name]?.who ?? 'requests'}: at most ${limit} per ${ttl / 1000} s; retry after ${retryAfter} s`,
        { retryAfterSeconds: retryAfter },
      );
    }
  }

  protected override throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    return Promise.reject(new RateLimitExceeded(detail));
  }
}
