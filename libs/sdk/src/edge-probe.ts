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

/**
 * Measures RTT at a region's probe edge over HTTP: a challenge, then at once its answer; the edge
 * times the gap on its own clock and answers a signed measurement for the API. Nothing here times
 * anything: a client cannot make itself look closer than it is.
 */
export class EdgeProber {
  private readonly fetch: FetchLike;

  constructor(options: { fetch?: FetchLike; requestTimeoutMs?: number } = {}) {
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  private readonly requestTimeoutMs: number;

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
    const challengeJson = await this.post(
      edgeUrl,
      'v1/probe/challenges',
      JSON.stringify({ playerId, region }),
    );
    // The challenge goes back byte for byte, spliced into the answer: it is opaque to the client,
    // and not parsing and re-serialising it keeps the client's turnaround (inside the RTT) short.
    const answer = `{"playerId":${JSON.stringify(playerId)},"region":${JSON.stringify(region)},"challenge":${challengeJson}}`;
    return JSON.parse(
      await this.post(edgeUrl, 'v1/probe/answers', answer),
    ) as SignedProbeMeasurement;
  }

  /** POSTs a JSON body; answers the response's text (problem+json refusals are thrown). */
  private async post(edgeUrl: string, path: string, body: string): Promise<string> {
    const request = { method: 'POST', path: `${edgeUrl.replace(/\/+$/, '')}/${path}` };
    let response: Response;
    try {
      response = await this.fetch(request.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error | undefined)?.name === 'TimeoutError';
      throw new MatchplaneNetworkError(request, timedOut, error);
    }
    const text = await response.text();
    if (!response.ok) {
      let problem: ProblemDetails | undefined;
      try {
        problem = JSON.parse(text) as ProblemDetails;
      } catch {
        problem = undefined;
      }
      throw new MatchplaneApiError({ request, status: response.status, problem });
    }
    return text;
  }
}
