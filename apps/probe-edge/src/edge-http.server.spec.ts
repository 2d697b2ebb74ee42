import { randomBytes } from 'node:crypto';
import { KeySet, probeMeasurementProblem, type ProbeMeasurement } from '@matchplane/join-auth';
import { EDGE_BODY_LIMIT_BYTES, EdgeHttpServer } from './edge-http.server';
import { ProbeEdge } from './probe-edge.service';

const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';
const keys = KeySet.fromKeys({ 'probe-1': randomBytes(32) });

describe(EdgeHttpServer.name, () => {
  const server = new EdgeHttpServer(
    new ProbeEdge('eu-west', { keys, activeKeyId: 'probe-1' }, 5_000),
    { host: '127.0.0.1', port: 0 },
  );
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  const post = (path: string, body: string, type = 'application/json') =>
    fetch(url(path), { method: 'POST', headers: { 'content-type': type }, body });

  beforeAll(() => server.onApplicationBootstrap());
  afterAll(() => server.onApplicationShutdown());

  async function expectProblem(response: Response, status: number, code: string): Promise<string> {
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await response.json()) as { status: number; code: string; detail: string };
    expect([response.status, body.status, body.code]).toEqual([status, status, code]);
    return body.detail;
  }

  it('issues a challenge and answers its echo with a signed measurement', async () => {
    const challengeResponse = await post(
      '/v1/probe/challenges',
      JSON.stringify({ playerId: PLAYER, region: 'eu-west' }),
    );
    expect(challengeResponse.status).toBe(201);
    const challenge: unknown = await challengeResponse.json();
    const answer = await post(
      '/v1/probe/answers',
      JSON.stringify({ playerId: PLAYER, region: 'eu-west', challenge }),
    );
    expect(answer.status).toBe(200);
    const measurement = (await answer.json()) as ProbeMeasurement;
    expect(measurement).toMatchObject({ playerId: PLAYER, region: 'eu-west' });
    expect(probeMeasurementProblem(keys, measurement)).toBeUndefined();
  });

  it('answers a round with a signed measurement and the next challenge, which answers in turn', async () => {
    let challenge: unknown = await (
      await post('/v1/probe/challenges', JSON.stringify({ playerId: PLAYER, region: 'eu-west' }))
    ).json();
    const measurementIds: string[] = [];
    for (let round = 0; round < 3; round++) {
      const reply = await post(
        '/v1/probe/rounds',
        JSON.stringify({ playerId: PLAYER, region: 'eu-west', challenge }),
      );
      expect(reply.status).toBe(200);
      const body = (await reply.json()) as { measurement: ProbeMeasurement; challenge: unknown };
      expect(Object.keys(body)).toEqual(['measurement', 'challenge']);
      expect(body.measurement).toMatchObject({ playerId: PLAYER, region: 'eu-west' });
      expect(probeMeasurementProblem(keys, body.measurement)).toBeUndefined();
      expect(body.challenge).not.toEqual(challenge);
      measurementIds.push(body.measurement.measurementId);
      challenge = body.challenge;
    }
    expect(new Set(measurementIds).size).toBe(3);
    const last = await post(
      '/v1/probe/answers',
      JSON.stringify({ playerId: PLAYER, region: 'eu-west', challenge }),
    );
    expect(last.status).toBe(200);
  });

  it('answers its health routes with its region', async () => {
    for (const path of ['/live', '/health']) {
      const response = await fetch(url(path));
      expect([response.status, await response.json()]).toEqual([
        200,
        { status: 'ok', region: 'eu-west' },
      ]);
    }
  });

  it('refuses bad input with problem+json and the API’s codes', async () => {
    const challenges = '/v1/probe/challenges';
    expect(
      await expectProblem(
        await post(challenges, JSON.stringify({ playerId: 'nobody', region: 'eu-west' })),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/playerId/);
    expect(
      await expectProblem(
        await post(challenges, JSON.stringify({ playerId: PLAYER, region: 'eu-west', x: 1 })),
        400,
        'VALIDATION_FAILED',
      ),
    ).toMatch(/property x/);
    await expectProblem(await post(challenges, '{"playerId":'), 400, 'MALFORMED_JSON');
    await expectProblem(await post(challenges, ''), 400, 'MALFORMED_JSON');
    await expectProblem(await post(challenges, 'a=b', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(
      await post(challenges, JSON.stringify({ pad: 'x'.repeat(EDGE_BODY_LIMIT_BYTES) })),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    await expectProblem(
      await post(challenges, JSON.stringify({ playerId: PLAYER, region: 'us-east' })),
      409,
      'PROBE_WRONG_REGION',
    );
    const wrongMethod = await fetch(url(challenges));
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    await expectProblem(wrongMethod, 405, 'METHOD_NOT_ALLOWED');
    await expectProblem(await fetch(url('/v1/nothing')), 404, 'NOT_FOUND');
  });

  it('refuses an answer or a round whose challenge was altered or is of another region, naming the reason', async () => {
    const challenge = (await (
      await post('/v1/probe/challenges', JSON.stringify({ playerId: PLAYER, region: 'eu-west' }))
    ).json()) as { issuedAtUs: number };
    const altered = { ...challenge, issuedAtUs: challenge.issuedAtUs - 50_000 };
    for (const route of ['/v1/probe/answers', '/v1/probe/rounds']) {
      const refusal = (region: string, echoed: unknown) =>
        post(route, JSON.stringify({ playerId: PLAYER, region, challenge: echoed }));
      await expectProblem(await refusal('eu-west', altered), 403, 'PROBE_BAD_SIGNATURE');
      await expectProblem(await refusal('us-east', challenge), 409, 'PROBE_WRONG_REGION');
    }
  });
});
