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
 * The most samples one probe takes: the most the API keeps per player and region
 * (PROBE_SAMPLES_KEPT is at most 50); more would only be thrown away.
 */
export const MAX_PROBE_SAMPLES = 50;

/**
 * How old a chain of samples gets before it ends and its measurements go to the API: a third of
 * the API's default PROBE_MEASUREMENT_MAX_AGE_MS (a minute). A deployment that shortens that sets
 * the probe's `recordWithinMs` below it.
 */
export const DEFAULT_RECORD_WITHIN_MS = 20_000;

/** Throws a RangeError naming the limits unless `samples` is an integer from 1 to MAX_PROBE_SAMPLES. */
export function checkProbeSamples(samples: number): void {
  if (!Number.isInteger(samples) || samples < 1 || samples > MAX_PROBE_SAMPLES)
    throw new RangeError(
      `samples must be an integer from 1 to ${MAX_PROBE_SAMPLES}, not ${String(samples)}`,
    );
}

/**
 * Throws a RangeError unless `recordWithinMs` is a positive finite number: with NaN or Infinity a
 * chain would never end (every sample unrecorded until the last), with 0 or less every chain
 * would be one sample.
 */
export function checkRecordWithinMs(recordWithinMs: number): void {
  if (!Number.isFinite(recordWithinMs) || recordWithinMs <= 0)
    throw new RangeError(
      `recordWithinMs must be a positive number of milliseconds, not ${String(recordWithinMs)}`,
    );
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
   * `samples` measurements at the edge, handed to the API by `record` after each chain of rounds
   * (see {@link measureChain}); answers the API's last answer. A measurement expires
   * (PROBE_MEASUREMENT_MAX_AGE_MS, a minute by default): a chain ends once it is `recordWithinMs`
   * old, so none waits longer than about that before it is recorded. `samples` and
   * `recordWithinMs` come checked from the client's probe (ProbeCalls), the one way in.
   */
  async probe(
    target: {
      edge: string;
      region: string;
      samples: number;
      playerId: string | undefined;
      recordWithinMs: number;
    },
    record: (measurement: SignedProbeMeasurement) => Promise<ProbeMeasurementResponse>,
  ): Promise<ProbeMeasurementResponse> {
    const { edge, region, playerId, samples, recordWithinMs } = target;
    if (!playerId)
      throw new Error("probing at a region's edge needs a session made by createSession");
    let last: ProbeMeasurementResponse | undefined;
    let taken = 0;
    let edgeHasRounds = true;
    while (taken < samples) {
      const chain = await this.measureChain(
        { edgeUrl: edge, playerId, region, recordWithinMs },
        samples - taken,
        edgeHasRounds,
      );
      edgeHasRounds = chain.edgeHasRounds;
      taken += chain.measurements.length;
      // Recorded with no sample on the wire: a recording's answer arriving mid-sample would delay
      // the client's turnaround, which is inside the RTT.
      for (const measurement of chain.measurements) last = await record(measurement);
    }
    // samples >= 1, so something was recorded.
    return last as ProbeMeasurementResponse;
  }

  /**
   * Up to `wanted` measurements in one chain: a challenge, then rounds (each answers the last
   * challenge and brings the next one in the same reply), the last a plain answer, so n samples in
   * n + 1 requests. Nothing runs between a challenge and its answer but the splice. The chain ends
   * early, with a plain answer, once it is `recordWithinMs` old. An edge without rounds (404) gives
   * none here (the refused round's challenge is a round trip old: answered, it would read long);
   * the chains after that are a fresh challenge and an answer each.
   */
  private async measureChain(
    at: { edgeUrl: string; playerId: string; region: string; recordWithinMs: number },
    wanted: number,
    edgeHasRounds: boolean,
  ): Promise<{ measurements: SignedProbeMeasurement[]; edgeHasRounds: boolean }> {
    const { edgeUrl, playerId, region } = at;
    const startedAt = Date.now();
    const measurements: SignedProbeMeasurement[] = [];
    let challengeJson = await this.challenge(edgeUrl, playerId, region);
    for (;;) {
      const body = answerBody(playerId, region, challengeJson);
      const chained =
        edgeHasRounds &&
        measurements.length < wanted - 1 &&
        Date.now() - startedAt < at.recordWithinMs;
      if (!chained) {
        measurements.push(await this.answer(edgeUrl, body));
        return { measurements, edgeHasRounds };
      }
      const round = await this.round(edgeUrl, body);
      if (round === undefined) return { measurements, edgeHasRounds: false };
      measurements.push(round.measurement);
      // Parsed, unlike a challenge's own reply: the edge writes it canonically, and its MAC
      // covers the fields, not the JSON text.
      challengeJson = JSON.stringify(round.challenge);
    }
  }

  private challenge(edgeUrl: string, playerId: string, region: string): Promise<string> {
    return this.send(edgeUrl, 'v1/probe/challenges', JSON.stringify({ playerId, region }));
  }

  private async answer(edgeUrl: string, body: string): Promise<SignedProbeMeasurement> {
    return JSON.parse(await this.send(edgeUrl, 'v1/probe/answers', body)) as SignedProbeMeasurement;
  }

  /** A round's reply, or undefined where the edge has no rounds (404). */
  private async round(edgeUrl: string, body: string): Promise<EdgeRound | undefined> {
    try {
      return JSON.parse(await this.send(edgeUrl, 'v1/probe/rounds', body)) as EdgeRound;
    } catch (error) {
      if (error instanceof MatchplaneApiError && error.status === 404) return undefined;
      throw error;
    }
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
