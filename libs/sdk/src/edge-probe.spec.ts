import type { QueueOptionsResponse } from '@matchplane/contracts';
import { EdgeProber, httpProbeEdge, MAX_PROBE_SAMPLES } from './edge-probe';
import type { FetchLike } from './http.transport';
import { PlayerClient, type ProbeOptions } from './player-client';
import { MatchplaneApiError } from './sdk.errors';

const BASE_URL = 'http://mm.test:8080';
const EDGE = 'http://edge.eu.test:7101';
const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';

const options: QueueOptionsResponse = {
  modes: [],
  regions: ['eu-west', 'us-east'],
  heartbeatIntervalMs: 10_000,
  probeEdges: { 'eu-west': ['udp://edge.eu.test:7201', EDGE] },
};

/** The calls of a probe at eu-west's edge, as `world` records them. */
const CHALLENGE = `POST ${EDGE}/v1/probe/challenges`;
const ROUND = `POST ${EDGE}/v1/probe/rounds`;
const ANSWER = `POST ${EDGE}/v1/probe/answers`;
const RECORD = `POST ${BASE_URL}/v1/probes/measurements`;

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': status < 400 ? 'application/json' : 'application/problem+json' },
  });

/** Answers like the API and an edge would; records the URLs called, in order. */
function world({ rounds = true } = {}): { fetch: FetchLike; urls: string[] } {
  const urls: string[] = [];
  let issued = 0;
  const fetch: FetchLike = (url, init) => {
    urls.push(`${init.method ?? 'GET'} ${url}`);
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    if (url === `${BASE_URL}/v1/sessions`)
      return Promise.resolve(json(201, { token: 't', expiresAt: '', playerId: PLAYER }));
    if (url === `${BASE_URL}/v1/queue/options`) return Promise.resolve(json(200, options));
    if (url === `${EDGE}/v1/probe/challenges`) return Promise.resolve(json(201, { nonce: 'n' }));
    if (url === `${EDGE}/v1/probe/rounds` && rounds)
      return Promise.resolve(
        json(200, {
          measurement: { measurementId: `m${issued}`, echoed: body },
          challenge: { nonce: `n${(issued += 1)}` },
        }),
      );
    if (url === `${EDGE}/v1/probe/answers`)
      return Promise.resolve(json(200, { measurementId: 'm', echoed: body }));
    if (url === `${BASE_URL}/v1/probes/measurements`)
      return Promise.resolve(
        json(200, { region: 'eu-west', rttMs: 20, estimateMs: 20, samplesMs: [20] }),
      );
    if (url.startsWith(`${BASE_URL}/v1/probes/us-east/challenge`))
      return Promise.resolve(json(201, { challengeId: 'c', nonce: 'n', region: 'us-east' }));
    if (url.startsWith(`${BASE_URL}/v1/probes/us-east/answer`))
      return Promise.resolve(
        json(200, { region: 'us-east', rttMs: 5, estimateMs: 5, samplesMs: [5] }),
      );
    return Promise.resolve(json(404, { code: 'NOT_FOUND', status: 404 }));
  };
  return { fetch, urls };
}

/** Probes eu-west (its edge); answers the URLs called and the bodies sent. */
async function probeAtEdge(
  { fetch, urls }: ReturnType<typeof world>,
  samples: number,
  recordWithinMs?: number,
) {
  const sent: unknown[] = [];
  const recording: FetchLike = (url, init) => {
    if (typeof init.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  const client = new PlayerClient({ baseUrl: BASE_URL, fetch: recording });
  await client.createSession();
  await client.queueOptions();
  await client.probe('eu-west', { samples, recordWithinMs });
  return { urls, sent };
}

describe(EdgeProber.name, () => {
  it('picks the first http(s) edge a region lists, none for a region without one', () => {
    expect(httpProbeEdge(options, 'eu-west')).toBe(EDGE);
    expect(httpProbeEdge(options, 'us-east')).toBeUndefined();
    expect(httpProbeEdge(undefined, 'eu-west')).toBeUndefined();
  });

  it('probes a region with an edge there (challenge, answer, measurement to the API) and one without at the API', async () => {
    const { fetch, urls } = world();
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
    await client.createSession();
    const result = await client.probeAll(undefined, { samples: 1 });
    expect(result.failed).toEqual({});
    expect(urls).toEqual([
      `POST ${BASE_URL}/v1/sessions`,
      `GET ${BASE_URL}/v1/queue/options`,
      CHALLENGE,
      ANSWER,
      RECORD,
      `POST ${BASE_URL}/v1/probes/us-east/challenge`,
      `POST ${BASE_URL}/v1/probes/us-east/answer`,
    ]);
  });

  it('takes several samples in rounds, then hands the measurements to the API with nothing on the wire', async () => {
    const { urls, sent } = await probeAtEdge(world(), 3);
    expect(urls.slice(2)).toEqual([CHALLENGE, ROUND, ROUND, ANSWER, RECORD, RECORD, RECORD]);
    const answer = (nonce: string) => ({
      playerId: PLAYER,
      region: 'eu-west',
      challenge: { nonce },
    });
    // Each round answers the challenge the one before brought; the API gets each measurement.
    expect(sent.slice(2)).toEqual([
      answer('n'),
      answer('n1'),
      answer('n2'),
      { measurementId: 'm0', echoed: answer('n') },
      { measurementId: 'm1', echoed: answer('n1') },
      { measurementId: 'm', echoed: answer('n2') },
    ]);
  });

  it('probes an edge without rounds (404) a fresh challenge and an answer at a time', async () => {
    const { urls } = await probeAtEdge(world({ rounds: false }), 3);
    // The challenge the refused round carried is a round trip old: answered, it would read long.
    expect(urls.slice(2)).toEqual([
      CHALLENGE,
      ROUND,
      CHALLENGE,
      ANSWER,
      RECORD,
      CHALLENGE,
      ANSWER,
      RECORD,
      CHALLENGE,
      ANSWER,
      RECORD,
    ]);
  });

  it('ends a chain once it is recordWithinMs old, records it, then starts a fresh one', async () => {
    const { fetch, urls } = world();
    // Each round takes 100 ms: with 150 ms to record within, the third sample is a plain answer.
    const slowEdge: FetchLike = async (url, init) => {
      if (url.endsWith('/v1/probe/rounds'))
        await new Promise((resolve) => setTimeout(resolve, 100));
      return fetch(url, init);
    };
    await probeAtEdge({ fetch: slowEdge, urls }, 5, 150);
    expect(urls.slice(2)).toEqual([
      CHALLENGE,
      ROUND,
      ROUND,
      ANSWER,
      RECORD,
      RECORD,
      RECORD,
      CHALLENGE,
      ROUND,
      ANSWER,
      RECORD,
      RECORD,
    ]);
  });

  it('stops at the first measurement the API refuses and throws its problem', async () => {
    const { fetch, urls } = world();
    const refusing: FetchLike = (url, init) => {
      if (!url.endsWith('/v1/probes/measurements')) return fetch(url, init);
      urls.push(`${init.method ?? 'GET'} ${url}`);
      return Promise.resolve(json(410, { code: 'PROBE_MEASUREMENT_EXPIRED', status: 410 }));
    };
    const error = await probeAtEdge({ fetch: refusing, urls }, 5).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ status: 410, code: 'PROBE_MEASUREMENT_EXPIRED' });
    // The first chain's first measurement is refused: nothing more is sent.
    expect(urls.slice(2)).toEqual([CHALLENGE, ROUND, ROUND, ROUND, ROUND, ANSWER, RECORD]);
  });

  const SAMPLES_LIMITS = `samples must be an integer from 1 to ${MAX_PROBE_SAMPLES}`;
  const RECORD_WITHIN_LIMITS = 'recordWithinMs must be a positive number of milliseconds';
  it.each<[ProbeOptions, string]>([
    ...[0, -1, 2.5, MAX_PROBE_SAMPLES + 1, Infinity].map((samples): [ProbeOptions, string] => [
      { samples },
      SAMPLES_LIMITS,
    ]),
    ...[0, -1, NaN, Infinity].map((recordWithinMs): [ProbeOptions, string] => [
      { recordWithinMs },
      RECORD_WITHIN_LIMITS,
    ]),
  ])('refuses %p before any request, at an edge or at the API', async (probeOptions, limits) => {
    const { fetch, urls } = world();
    const client = new PlayerClient({ baseUrl: BASE_URL, fetch });
    await client.createSession();
    await client.queueOptions();
    await expect(client.probe('eu-west', probeOptions)).rejects.toThrow(RangeError);
    await expect(client.probe('us-east', probeOptions)).rejects.toThrow(limits);
    expect(urls).toHaveLength(2);
  });

  it('echoes the challenge to the edge and the measurement to the API unchanged', async () => {
    const { sent } = await probeAtEdge(world(), 1);
    expect(sent.slice(-3)).toEqual([
      { playerId: PLAYER, region: 'eu-west' },
      { playerId: PLAYER, region: 'eu-west', challenge: { nonce: 'n' } },
      {
        measurementId: 'm',
        echoed: { playerId: PLAYER, region: 'eu-west', challenge: { nonce: 'n' } },
      },
    ]);
  });

  it('sends the challenge back byte for byte, as the edge wrote it', async () => {
    // Key order, spacing and an integer past 2^53 would all change in a parse and re-serialise.
    const challengeText = '{ "z":1,"issuedAtUs":12345678901234567890,"a":"x" }';
    const { fetch } = world();
    const bodies: string[] = [];
    const edgeWriting: FetchLike = (url, init) => {
      bodies.push(`${url} ${init.body as string}`);
      return url === `${EDGE}/v1/probe/challenges`
        ? Promise.resolve(new Response(challengeText, { status: 201 }))
        : fetch(url, init);
    };
    await probeAtEdge({ fetch: edgeWriting, urls: [] }, 1);
    expect(bodies).toContain(
      `${EDGE}/v1/probe/answers {"playerId":"${PLAYER}","region":"eu-west","challenge":${challengeText}}`,
    );
  });

  it("throws an edge's problem as a MatchplaneApiError with its code", async () => {
    const { fetch, urls } = world();
    const refusing: FetchLike = (url, init) =>
      url.startsWith(EDGE)
        ? Promise.resolve(json(410, { code: 'PROBE_EXPIRED', status: 410, detail: 'late' }))
        : fetch(url, init);
    const error = await probeAtEdge({ fetch: refusing, urls }, 1).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MatchplaneApiError);
    expect(error).toMatchObject({ status: 410, code: 'PROBE_EXPIRED' });
  });
});
