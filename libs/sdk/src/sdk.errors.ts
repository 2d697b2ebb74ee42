import type { ErrorCode, ProblemDetails } from '@matchplane/contracts';

/** The request an SDK error is about (no headers or body: they may carry secrets). */
export interface FailedRequest {
  readonly method: string;
  /** Path under the API prefix, e.g. `queue/tickets`. */
  readonly path: string;
}

export interface MatchplaneApiErrorInit {
  request: FailedRequest;
  status: number;
  problem?: ProblemDetails;
  retryAfterSeconds?: number;
}

/**
 * The API answered with an error status. Switch on `code` (stable), never on the message;
 * `code` is undefined only when the body was not a problem document (e.g. a proxy's error page).
 */
export class MatchplaneApiError extends Error {
  override name = 'MatchplaneApiError';
  readonly request: FailedRequest;
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  /** From the Retry-After header (delta-seconds or HTTP-date), when the server sent one. */
  readonly retryAfterSeconds: number | undefined;
  /** The whole problem+json body, e.g. for `errors` of a validation failure. */
  readonly problem: ProblemDetails | undefined;

  constructor(init: MatchplaneApiErrorInit) {
    const { request, status, problem } = init;
    super(
      `${request.method} ${request.path} failed: ${status}${problem ? ` ${problem.code}` : ''}` +
        (problem?.detail ? `: ${problem.detail}` : ''),
    );
    this.request = request;
    this.status = status;
    this.problem = problem;
    this.code = problem?.code;
    this.title = problem?.title;
    this.detail = problem?.detail;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** No HTTP answer: the connection failed, or the request outlived `requestTimeoutMs`. */
export class MatchplaneNetworkError extends Error {
  override name = 'MatchplaneNetworkError';

  constructor(
    readonly request: FailedRequest,
    readonly timedOut: boolean,
    cause: unknown,
  ) {
    super(
      `${request.method} ${request.path} ${timedOut ? 'timed out' : 'failed to reach the API'}`,
      { cause },
    );
  }
}

/**
 * Seconds to wait from a Retry-After header value (RFC 9110: delta-seconds or an HTTP-date);
 * undefined when absent or unparsable. A date in the past is 0.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: Date = new Date(),
): number | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // Every HTTP-date form starts with the day name; Date.parse alone would read "-5" as a year.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}
