import { ErrorCode, IDEMPOTENCY_KEY_HEADER, type ProblemDetails } from '@matchplane/contracts';
import { ApiEndpoints, endpointUrl, type ApiEndpointsInput } from './api-endpoints';
import {
  MatchplaneApiError,
  MatchplaneNetworkError,
  parseRetryAfter,
  type FailedRequest,
} from './sdk.errors';

/** The part of `fetch` the SDK uses; global fetch (Node 20, browsers) fits, and so does a test double. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Further attempts after the first, for retryable failures only. Default 2. */
  retries?: number;
  /** Backoff before the first retry (ms); doubles with each retry, with jitter. Default 250. */
  baseDelayMs?: number;
  /** Cap of one backoff delay (ms). Default 5_000. */
  maxDelayMs?: number;
  /**
   * Also retry 429s after their Retry-After. Default false: a rate limit or a no-show cooldown is
   * usually something to show the player, not to wait out silently.
   */
  retryRateLimited?: boolean;
  /** The longest Retry-After (ms) a retry waits out; a longer one is thrown at once. Default 30_000. */
  maxRetryAfterMs?: number;
}

export interface HttpTransportOptions {
  /**
   * Where the API is served, e.g. `https://mm.example.com` (the `/v1` prefix is added), or every
   * replica of it: a request that finds its replica unreachable (or answering 502/503/504) is
   * retried on the next one.
   */
  baseUrl: ApiEndpointsInput;
  fetch?: FetchLike;
  /** Per attempt, body included. Default 10_000. */
  requestTimeoutMs?: number;
  /** A number is `{retries: n}`. */
  retries?: number | RetryOptions;
}

/**
 * How a call may be retried:
 * - `idempotency-key`: a mutation; one fresh Idempotency-Key per logical call, reused by every
 *   retry of it, so the server applies it once and replays its answer;
 * - `safe`: naturally idempotent (reads, deleting the current session, blocking a player),
 *   retried without a key;
 * - `never`: sent once (a probe answer: a retry would measure the SDK's backoff, not the network).
 */
export type RetryMode = 'idempotency-key' | 'safe' | 'never';

export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the prefix, from PlayerRoutes. */
  path: string;
  body?: unknown;
  /** Bearer token to send, if any. */
  token?: string;
  retry: RetryMode;
  /**
   * Called for each attempt that got no answer (network error, timeout): the server may have
   * applied it, so a later refusal can mean "already done".
   */
  onUnanswered?: () => void;
}

const PREFIX = 'v1';

/** HTTP with the API's conventions: JSON bodies, problem+json errors, idempotent retries. */
export class HttpTransport {
  private readonly endpoints: ApiEndpoints;
  private readonly fetch: FetchLike;
  private readonly requestTimeoutMs: number;
  private readonly retry: Required<RetryOptions>;

  constructor(options: HttpTransportOptions) {
    this.endpoints = ApiEndpoints.from(options.baseUrl);
    // Bound late so a test (or polyfill) replacing globalThis.fetch after construction still applies.
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    const retry =
      typeof options.retries === 'number' ? { retries: options.retries } : (options.retries ?? {});
    this.retry = {
      retries: retry.retries ?? 2,
      baseDelayMs: retry.baseDelayMs ?? 250,
      maxDelayMs: retry.maxDelayMs ?? 5_000,
      retryRateLimited: retry.retryRateLimited ?? false,
      maxRetryAfterMs: retry.maxRetryAfterMs ?? 30_000,
    };
    if (!Number.isInteger(this.retry.retries) || this.retry.retries < 0) {
      throw new Error('retries must be a non-negative integer');
    }
  }

  /** Sends the request (retrying as `retry` allows) and returns the parsed JSON body, or undefined on 204. */
  async request<T>(request: TransportRequest): Promise<T | undefined> {
    const described: FailedRequest = { method: request.method, path: request.path };
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
    if (request.retry === 'idempotency-key') {
      // One key per logical call: every retry below resends these same headers.
      headers[IDEMPOTENCY_KEY_HEADER] = globalThis.crypto.randomUUID();
    }
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const maxRetries = request.retry === 'never' ? 0 : this.retry.retries;

    for (let attempt = 0; ; attempt += 1) {
      let failure: MatchplaneApiError | MatchplaneNetworkError;
      const endpoint = this.endpoints.current();
      try {
        const response = await this.fetch(endpointUrl(endpoint, `${PREFIX}/${request.path}`), {
          method: request.method,
          headers,
          body,
          signal: AbortSignal.timeout(this.requestTimeoutMs),
        });
        const text = await response.text();
        if (response.ok) return parseSuccess<T>(described, response, text);
        failure = toApiError(described, response, text);
      } catch (err) {
        if (err instanceof MatchplaneApiError) throw err; // an unparsable 2xx: retrying will not help
        failure = new MatchplaneNetworkError(described, isTimeout(err), err);
        request.onUnanswered?.();
      }
      if (replicaUnavailable(failure)) this.endpoints.failover(endpoint);
      const delayMs = attempt < maxRetries ? this.retryDelayMs(failure, attempt) : undefined;
      if (delayMs === undefined) throw failure;
      await sleep(delayMs);
    }
  }

  /** How long to wait before retrying `failure`, or undefined when it must not be retried. */
  private retryDelayMs(
    failure: MatchplaneApiError | MatchplaneNetworkError,
    attempt: number,
  ): number | undefined {
    const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt);
    // Jitter spreads the retries of many clients hit by one outage.
    const jittered = backoff / 2 + Math.random() * (backoff / 2);
    if (failure instanceof MatchplaneNetworkError) return jittered;

    const retryable =
      (failure.status >= 500 && failure.status !== 501) ||
      (failure.status === 409 && failure.code === ErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS) ||
      (failure.status === 429 && this.retry.retryRateLimited);
    if (!retryable) return undefined;
    if (failure.retryAfterSeconds === undefined) return jittered;
    const retryAfterMs = failure.retryAfterSeconds * 1000;
    return retryAfterMs <= this.retry.maxRetryAfterMs ? retryAfterMs : undefined;
  }
}

/** The replica, not the request, is the trouble: the next attempt goes to another one. */
function replicaUnavailable(failure: MatchplaneApiError | MatchplaneNetworkError): boolean {
  return failure instanceof MatchplaneNetworkError || [502, 503, 504].includes(failure.status);
}

function parseSuccess<T>(request: FailedRequest, response: Response, text: string): T | undefined {
  if (response.status === 204 || text.length === 0) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new MatchplaneApiError({ request, status: response.status });
  }
}

function toApiError(request: FailedRequest, response: Response, text: string): MatchplaneApiError {
  return new MatchplaneApiError({
    request,
    status: response.status,
    problem: parseProblem(response, text),
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
  });
}

function parseProblem(response: Response, text: string): ProblemDetails | undefined {
  if (!/json/i.test(response.headers.get('content-type') ?? '')) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (
      typeof body === 'object' &&
      body !== null &&
      typeof (body as { code?: unknown }).code === 'string'
    ) {
      return body as ProblemDetails;
    }
  } catch {
    // Not a problem document after all; the status alone describes the failure.
  }
  return undefined;
}

/** By name: the DOMException AbortSignal.timeout raises may come from another realm than our Error. */
function isTimeout(err: unknown): boolean {
  const name =
    typeof err === 'object' && err !== null ? (err as { name?: unknown }).name : undefined;
  return name === 'TimeoutError' || name === 'AbortError';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
