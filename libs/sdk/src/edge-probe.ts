import type {
  ProbeMeasurementResponse,
  ProblemDetails,
  QueueOptionsResponse,
  SignedProbeMeasurement,
} from '@matchplane/contracts';
import type { FetchLike } from './http.transport';
import { MatchplaneApiError, MatchplaneNetworkError } from './sdk.errors';

/** The first http(s) probe edge the queue options list for `region`, if any. */
export function httpProbeEdge(
  options: QueueOptionsResponse | undefined,
  region: string,
): string | undefined {
  return options?.probeEdges?.[region]?.find((url) => /^https?:\/\//.test(url));
}

/** What one POST to a probe edge answered: its status and its body's text. */
export interface EdgeReply {
  readonly status: number;
  readonly text: string;
}

/**
 * One POST of a JSON body to a probe edge, given up when `timeoutMs` passes (rejecting with an
 * error named TimeoutError). The client's turnaround between a challenge and its answer is inside
 * every sample, so the transport is a seam: fetch by default, node:http on Node (installed by
 * `@matchplane/sdk/node`), which turns a reply around in about half of undici's time.
 */
export type EdgePost = (url: string, body: string, timeoutMs: number) => Promise<EdgeReply>;

function fetchEdgePost(fetch: FetchLike): EdgePost {
  return async (url, body, timeoutMs) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text() };
  };
}

let installedEdgePost: EdgePost | undefined;

/**
 * Makes `post` how every client made without a `fetch` option reaches probe edges.
 * `@matchplane/sdk/node` installs `nodeEdgePost` when loaded.
 */
export function installEdgePost(post: EdgePost | undefined): void {
  installedEdgePost = post;
}

/**
 * Measures RTT at a region's probe edge over HTTP: a challenge, then at once its answer; the edge
 * times the gap on its own clock and answers a signed measurement for the API. Nothing here times
 * anything: a client cannot make itself look closer than it is.
 */
export class EdgeProber {
  private readonly post: EdgePost;
  private readonly requestTimeoutMs: number;

  constructor(options: { fetch?: FetchLike; requestTimeoutMs?: number } = {}) {
    const { fetch } = options;
    // A given fetch (a test double, a polyfill) is used for everything; otherwise the installed
    // transport, bound late like the API's so one installed after construction still applies.
    this.post = fetch
      ? fetchEdgePost(fetch)
      : (url, body, timeoutMs) =>
          (installedEdgePost ?? fetchEdgePost((u, init) => globalThis.fetch(u, init)))(
            url,
            body,
            timeoutMs,
          );
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  /**
   * `samples` measurements at the edge, each handed to the API by `record` as it is taken (they
   * expire within a minute); answers the API's last answer.
   */
  async probe(
    target: { edge: string; region: string; samples: number; playerId: string | undefined },
    record: (measurement: SignedProbeMeasurement) => Promise<ProbeMeasurementResponse>,
  ): Promise<ProbeMeasurementResponse> {
    const { edge, region, playerId } = target;
    if (!playerId)
      throw new Error("probing at a region's edge needs a session made by createSession");
    let last: ProbeMeasurementResponse | undefined;
    for (let sample = 0; sample < target.samples; sample += 1) {
      last = await record(await this.measure(edge, playerId, region));
    }
    // samples >= 1 (checked by the caller), so the loop ran.
    return last as ProbeMeasurementResponse;
  }

  async measure(
    edgeUrl: string,
    playerId: string,
    region: string,
  ): Promise<SignedProbeMeasurement> {
    const challengeJson = await this.send(
      edgeUrl,
      'v1/probe/challenges',
      JSON.stringify({ playerId, region }),
    );
    // The challenge goes back byte for byte, spliced into the answer: it is opaque to the client,
    // and not parsing and re-serialising it keeps the client's turnaround (inside the RTT) short.
    const answer = `{"playerId":${JSON.stringify(playerId)},"region":${JSON.stringify(region)},"challenge":${challengeJson}}`;
    return JSON.parse(
      await this.send(edgeUrl, 'v1/probe/answers', answer),
    ) as SignedProbeMeasurement;
  }

  /** POSTs a JSON body; answers the response's text (problem+json refusals are thrown). */
  private async send(edgeUrl: string, path: string, body: string): Promise<string> {
    const request = { method: 'POST', path: `${edgeUrl.replace(/\/+$/, '')}/${path}` };
    let reply: EdgeReply;
    try {
      reply = await this.post(request.path, body, this.requestTimeoutMs);
    } catch (error) {
      const timedOut = (error as Error | undefined)?.name === 'TimeoutError';
      throw new MatchplaneNetworkError(request, timedOut, error);
    }
    if (reply.status < 200 || reply.status > 299) {
      let problem: ProblemDetails | undefined;
      try {
        problem = JSON.parse(reply.text) as ProblemDetails;
      } catch {
        problem = undefined;
      }
      throw new MatchplaneApiError({ request, status: reply.status, problem });
    }
    return reply.text;
  }
}
