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

/** Throws a RangeError naming the limits unless `samples` is an integer from 1 to MAX_PROBE_SAMPLES. */
export function checkProbeSamples(samples: number): void {
  if (!Number.isInteger(samples) || samples < 1 || samples > MAX_PROBE_SAMPLES)
    throw new RangeError(
      `samples must be an integer from 1 to ${MAX_PROBE_SAMPLES}, not ${String(samples)}`,
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
   * `samples` measurements at the edge, each handed to the API by `record` as it arrives (a
   * measurement expires: PROBE_MEASUREMENT_MAX_AGE_MS, a minute by default); answers the API's last
   * answer.
   */
  async probe(
    target: { edge: string; region: string; samples: number; playerId: string | undefined },
    record: (measurement: SignedProbeMeasurement) => Promise<ProbeMeasurementResponse>,
  ): Promise<ProbeMeasurementResponse> {
    const { edge, region, playerId, samples } = target;
    if (!playerId)
      throw new Error("probing at a region's edge needs a session made by createSession");
    checkProbeSamples(samples);
    const recordings = new MeasurementQueue(record);
    await this.measureRounds(edge, playerId, region, samples, recordings);
    // samples >= 1, so something was recorded.
    return (await recordings.drained()) as ProbeMeasurementResponse;
  }

  /**
   * `samples` measurements in chains: a challenge, then rounds (each answers the last challenge and
   * brings the next one in the same reply), the last a plain answer; `samples` + 1 requests while
   * the API keeps up. Each measurement is queued for the API once the next answer is on its way, so
   * nothing runs between a challenge and its answer but the splice. A chain ends early (a plain
   * answer, the queue drained, a fresh challenge) when the previous measurement is still being
   * recorded (or refused), so none waits behind more than one recording and none expires in the
   * queue. An edge without rounds (404) is probed a fresh challenge and an answer at a time.
   */
  private async measureRounds(
    edgeUrl: string,
    playerId: string,
    region: string,
    samples: number,
    recordings: MeasurementQueue,
  ): Promise<void> {
    let taken = 0;
    let edgeHasRounds = true;
    while (taken < samples) {
      await recordings.drained();
      let challengeJson = await this.challenge(edgeUrl, playerId, region);
      let unrecorded: SignedProbeMeasurement | undefined;
      for (;;) {
        const body = answerBody(playerId, region, challengeJson);
        const chained = edgeHasRounds && taken < samples - 1 && recordings.ready;
        const reply = chained ? this.round(edgeUrl, body) : this.answer(edgeUrl, body);
        if (unrecorded) recordings.add(unrecorded);
        const answered = await reply;
        if (answered === undefined) {
          // Refused 404: an edge from before rounds. The challenge is a round trip old by now, so
          // it is dropped rather than answered late.
          edgeHasRounds = false;
          break;
        }
        taken += 1;
        if (!('challenge' in answered)) {
          recordings.add(answered);
          break;
        }
        unrecorded = answered.measurement;
        // Parsed, unlike a challenge's own reply: the edge writes it canonically, and its MAC
        // covers the fields, not the JSON text.
        challengeJson = JSON.stringify(answered.challenge);
      }
    }
  }

  async measure(
    edgeUrl: string,
    playerId: string,
    region: string,
  ): Promise<SignedProbeMeasurement> {
    const challengeJson = await this.challenge(edgeUrl, playerId, region);
    return this.answer(edgeUrl, answerBody(playerId, region, challengeJson));
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

/**
 * Hands measurements to the API one at a time, in arrival order, off the edge's path: recording
 * runs while the next sample is on the wire. Keeps the API's last answer, or the first refusal
 * (after which nothing more is sent).
 */
class MeasurementQueue {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private last: ProbeMeasurementResponse | undefined;
  private refusal: { error: unknown } | undefined;

  constructor(
    private readonly record: (
      measurement: SignedProbeMeasurement,
    ) => Promise<ProbeMeasurementResponse>,
  ) {}

  /** Nothing queued or being recorded, and nothing refused. */
  get ready(): boolean {
    return this.queued === 0 && !this.refusal;
  }

  add(measurement: SignedProbeMeasurement): void {
    this.queued += 1;
    this.tail = this.tail.then(async () => {
      try {
        if (!this.refusal) this.last = await this.record(measurement);
      } catch (error) {
        this.refusal ??= { error };
      } finally {
        this.queued -= 1;
      }
    });
  }

  /** Waits for every queued measurement; answers the last answer or throws the first refusal. */
  async drained(): Promise<ProbeMeasurementResponse | undefined> {
    await this.tail;
    if (this.refusal) throw this.refusal.error;
    return this.last;
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
