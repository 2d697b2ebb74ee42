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
   * `samples` measurements at the edge, then each handed to the API by `record` (they expire
   * within a minute); answers the API's last answer.
   */
  async probe(
    target: { edge: string; region: string; samples: number; playerId: string | undefined },
    record: (measurement: SignedProbeMeasurement) => Promise<ProbeMeasurementResponse>,
  ): Promise<ProbeMeasurementResponse> {
    const { edge, region, playerId } = target;
    if (!playerId)
      throw new Error("probing at a region's edge needs a session made by createSession");
    let last: ProbeMeasurementResponse | undefined;
    for (const measurement of await this.measureRounds(edge, playerId, region, target.samples)) {
      last = await record(measurement);
    }
    // samples >= 1 (checked by the caller), so the loop ran.
    return last as ProbeMeasurementResponse;
  }

  /**
   * `samples` measurements in samples + 1 requests: a challenge, then rounds (each answers the
   * last challenge and brings the next one in the same reply), the last a plain answer. Nothing
   * runs between a challenge and its answer but the splice. An edge without rounds (404) is
   * probed a challenge and an answer at a time.
   */
  async measureRounds(
    edgeUrl: string,
    playerId: string,
    region: string,
    samples: number,
  ): Promise<SignedProbeMeasurement[]> {
    const measurements: SignedProbeMeasurement[] = [];
    let challengeJson = await this.challenge(edgeUrl, playerId, region);
    while (measurements.length < samples - 1) {
      let reply: string;
      try {
        reply = await this.send(
          edgeUrl,
          'v1/probe/rounds',
          answerBody(playerId, region, challengeJson),
        );
      } catch (error) {
        if (!(error instanceof MatchplaneApiError && error.status === 404)) throw error;
        // An edge from before rounds: this challenge is still unanswered, the rest one by one.
        measurements.push(await this.answer(edgeUrl, playerId, region, challengeJson));
        while (measurements.length < samples) {
          measurements.push(await this.measure(edgeUrl, playerId, region));
        }
        return measurements;
      }
      const round = JSON.parse(reply) as EdgeRound;
      measurements.push(round.measurement);
      // Parsed, unlike a challenge's own reply: the edge writes it canonically, and its MAC
      // covers the fields, not the JSON text.
      challengeJson = JSON.stringify(round.challenge);
    }
    measurements.push(await this.answer(edgeUrl, playerId, region, challengeJson));
    return measurements;
  }

  async measure(
    edgeUrl: string,
    playerId: string,
    region: string,
  ): Promise<SignedProbeMeasurement> {
    return this.answer(edgeUrl, playerId, region, await this.challenge(edgeUrl, playerId, region));
  }

  private challenge(edgeUrl: string, playerId: string, region: string): Promise<string> {
    return this.send(edgeUrl, 'v1/probe/challenges', JSON.stringify({ playerId, region }));
  }

  private async answer(
    edgeUrl: string,
    playerId: string,
    region: string,
    challengeJson: string,
  ): Promise<SignedProbeMeasurement> {
    return JSON.parse(
      await this.send(edgeUrl, 'v1/probe/answers', answerBody(playerId, region, challengeJson)),
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

/** What a round answers: the measurement of the challenge sent, and the next challenge. */
interface EdgeRound {
  readonly measurement: SignedProbeMeasurement;
  readonly challenge: unknown;
}

/**
 * An answer's body with the challenge spliced in as the edge wrote it: it is opaque to the
 * client, and not parsing and re-serialising it keeps the client's turnaround (inside the RTT)
 * short.
 */
function answerBody(playerId: string, region: string, challengeJson: string): string {
  return `{"playerId":${JSON.stringify(playerId)},"region":${JSON.stringify(region)},"challenge":${challengeJson}}`;
}
