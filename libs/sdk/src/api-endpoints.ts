/** One API base URL, several replicas of it, or a list shared with other clients. */
export type ApiEndpointsInput = string | readonly string[] | ApiEndpoints;

/**
 * The API replicas a client may talk to, in order of preference. Every replica serves the same
 * state (PostgreSQL and Redis are shared), so when one stops answering the client moves to the
 * next and carries on: mutations keep their Idempotency-Key, and notifications resume from the
 * last revision seen. A PlayerClient shares one list between its HTTP calls and its notification
 * socket, so a replica found dead by one is left by both.
 */
export class ApiEndpoints {
  private readonly urls: readonly URL[];
  private index = 0;

  constructor(baseUrls: string | readonly string[]) {
    const list = typeof baseUrls === 'string' ? [baseUrls] : [...baseUrls];
    if (list.length === 0) throw new Error('at least one API base URL is required');
    this.urls = list.map((url) => new URL(url)); // fails fast on a malformed URL
  }

  static from(input: ApiEndpointsInput): ApiEndpoints {
    return input instanceof ApiEndpoints ? input : new ApiEndpoints(input);
  }

  get size(): number {
    return this.urls.length;
  }

  /** The replica to use now. */
  current(): URL {
    return this.urls[this.index]!;
  }

  /**
   * `failed` did not answer: the next replica becomes current, unless another call already moved
   * on from it (so a burst of failures against one replica moves the list once, not once each).
   */
  failover(failed: URL): void {
    if (this.urls[this.index] !== failed) return;
    this.index = (this.index + 1) % this.urls.length;
  }
}

/** `base` with its path kept and any trailing slash dropped, then `suffix`. */
export function endpointUrl(base: URL, suffix: string): string {
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}/${suffix}`;
}
