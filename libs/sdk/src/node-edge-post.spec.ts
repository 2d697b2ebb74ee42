import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProbeMeasurementResponse, SignedProbeMeasurement } from '@matchplane/contracts';
import { DEFAULT_RECORD_WITHIN_MS, EdgeProber, installEdgePost } from './edge-probe';
import { nodeEdgePost } from './node-edge-post';
import { MatchplaneApiError, MatchplaneNetworkError } from './sdk.errors';

const PLAYER = '6f1c2a4e-0b7d-4c1e-9a53-2f8d1e7b4c90';

/** One sample at `edge` as a client's probe takes it; answers the measurement it would record. */
async function probeOnce(prober: EdgeProber, edge: string): Promise<SignedProbeMeasurement> {
  let recorded: SignedProbeMeasurement | undefined;
  const target = { edge, region: 'eu-west', samples: 1, playerId: PLAYER };
  await prober.probe({ ...target, recordWithinMs: DEFAULT_RECORD_WITHIN_MS }, (measurement) => {
    recorded = measurement;
    return Promise.resolve({} as ProbeMeasurementResponse);
  });
  return recorded!;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

describe('nodeEdgePost', () => {
  let server: Server;
  let base: string;
  const seen: { url: string; type: string | undefined; body: string; socket: number }[] = [];
  const sockets = new Map<object, number>();
  let closeNextReuse = false;
  /** How many more requests arriving on a connection that served one before are reset. */
  let resetReuses = 0;
  const served = new WeakSet<object>();

  beforeAll(async () => {
    server = createServer((request, response) => {
      void readBody(request).then((body) => {
        if (!sockets.has(request.socket)) sockets.set(request.socket, sockets.size);
        seen.push({
          url: request.url ?? '',
          type: request.headers['content-type'],
          body,
          socket: sockets.get(request.socket)!,
        });
        if (request.url?.startsWith('/silent')) return; // never answers: the caller's timeout ends it
        const reused = served.has(request.socket);
        served.add(request.socket);
        if (reused && resetReuses > 0) {
          resetReuses -= 1;
          request.socket.destroy();
          return;
        }
        if (
          request.url === '/closing' &&
          closeNextReuse &&
          seen.at(-2)?.socket === seen.at(-1)!.socket
        ) {
          // A kept-alive connection the server gives up just as the client reuses it.
          closeNextReuse = false;
          request.socket.destroy();
          return;
        }
        if (request.url === '/v1/probe/challenges') {
          response.writeHead(201, { 'content-type': 'application/json' });
          response.end('{"nonce":"n1","sig":"s"}');
        } else if (request.url === '/v1/probe/answers') {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ measurementId: 'm1', echoed: JSON.parse(body) }));
        } else {
          response.writeHead(409, { 'content-type': 'application/problem+json' });
          response.end('{"code":"PROBE_EXPIRED","status":409}');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    installEdgePost(undefined);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => (seen.length = 0));

  it('POSTs the JSON body and answers status and text, a refusal included', async () => {
    await expect(nodeEdgePost(`${base}/v1/probe/challenges`, '{"a":1}', 5_000)).resolves.toEqual({
      status: 201,
      text: '{"nonce":"n1","sig":"s"}',
    });
    await expect(nodeEdgePost(`${base}/other`, '{}', 5_000)).resolves.toEqual({
      status: 409,
      text: '{"code":"PROBE_EXPIRED","status":409}',
    });
    expect(seen.map(({ type, body }) => [type, body])).toEqual([
      ['application/json', '{"a":1}'],
      ['application/json', '{}'],
    ]);
  });

  it('sends again once on a new connection when a reused kept-alive one was closed under it', async () => {
    await expect(nodeEdgePost(`${base}/closing`, '{"n":1}', 5_000)).resolves.toMatchObject({
      status: 409,
    });
    closeNextReuse = true;
    await expect(nodeEdgePost(`${base}/closing`, '{"n":2}', 5_000)).resolves.toMatchObject({
      status: 409,
    });
    expect(seen.map(({ body, socket }) => [body, socket - seen[0]!.socket])).toEqual([
      ['{"n":1}', 0],
      ['{"n":2}', 0],
      ['{"n":2}', 1],
    ]);
  });

  it('sends again only once: a resend that also meets a reset reused connection fails with its network error', async () => {
    // Two requests at once leave (at least) two kept-alive connections idle for the next ones.
    await Promise.all([1, 2].map(() => nodeEdgePost(`${base}/other`, '{}', 5_000)));
    resetReuses = 2;
    seen.length = 0;
    const failure = nodeEdgePost(`${base}/other`, '{"n":3}', 5_000);
    await expect(failure).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(seen.map(({ body }) => body)).toEqual(['{"n":3}', '{"n":3}']);

    installEdgePost(nodeEdgePost);
    await Promise.all([1, 2].map(() => nodeEdgePost(`${base}/other`, '{}', 5_000)));
    resetReuses = 2;
    const network = probeOnce(new EdgeProber(), base);
    await expect(network).rejects.toMatchObject({
      constructor: MatchplaneNetworkError,
      timedOut: false,
      cause: { code: 'ECONNRESET' },
    });
  });

  it('gives up after its timeout with a TimeoutError', async () => {
    await expect(nodeEdgePost(`${base}/silent`, '{}', 150)).rejects.toMatchObject({
      name: 'TimeoutError',
    });
  });

  it('once installed, carries a client’s probe without fetch: challenge and answer on one kept-alive connection', async () => {
    installEdgePost(nodeEdgePost);
    const fetchBefore = globalThis.fetch;
    globalThis.fetch = () => Promise.reject(new Error('fetch must not be used'));
    try {
      const measurement = await probeOnce(new EdgeProber(), base);
      expect(measurement).toEqual({
        measurementId: 'm1',
        echoed: { playerId: PLAYER, region: 'eu-west', challenge: { nonce: 'n1', sig: 's' } },
      });
      expect(seen.map(({ url }) => url)).toEqual(['/v1/probe/challenges', '/v1/probe/answers']);
      expect(seen[0]!.socket).toBe(seen[1]!.socket);
    } finally {
      globalThis.fetch = fetchBefore;
    }
  });

  it('turns a refusal into MatchplaneApiError and a timeout into a timed-out MatchplaneNetworkError', async () => {
    installEdgePost(nodeEdgePost);
    const prober = new EdgeProber({ requestTimeoutMs: 150 });
    await expect(probeOnce(prober, `${base}/refusing`)).rejects.toMatchObject({
      constructor: MatchplaneApiError,
      status: 409,
    });
    await expect(probeOnce(prober, `${base}/silent`)).rejects.toMatchObject({
      constructor: MatchplaneNetworkError,
      timedOut: true,
    });
  });
});
