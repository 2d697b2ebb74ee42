import { randomBytes, randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { DataSource } from 'typeorm';
import {
  decodeProbeChallenge,
  KeySet,
  signProbeMeasurement,
  type ProbeChallenge,
  type ProbeMeasurement,
} from '@matchplane/join-auth';
import { MatchplaneApiError, MAX_PROBE_SAMPLES, PlayerClient } from '@matchplane/sdk';
import { writeKeyFile } from '../support/app-sandbox';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startDelayProxyProcess, type DelayProxyProcess } from '../support/delay-proxy';
import { freePort, startApp, waitForHttp, type RunningApp } from '../support/processes';
import { deleteRedisPrefix, testRedisPrefix } from '../support/redis';

/*
 * Regions through real processes: one probe edge per region, each behind a loopback proxy that
 * makes it 15, 70 or 140 ms away, the API with every database round trip slowed by 50 ms, and a
 * matcher. Players probe through the SDK (challenge and answer at the edge, the signed
 * measurement to the API), queue, and are matched in the region their proxy makes nearest; every
 * recorded RTT is the proxy's delay, not the API's database time.
 */

const REGIONS = { 'eu-west': 140, 'us-east': 15, 'ap-south': 70 } as const;
type Region = keyof typeof REGIONS;
const DB_ADDED_RTT_MS = 50;
const MAX_AGE_MS = 5_000;
/** The shortest PROBE_MEASUREMENT_MAX_AGE_MS the API takes, for the API that expires them soonest. */
const SHORT_MAX_AGE_MS = 1_000;
/**
 * What a region's median sample may exceed its delay by: process wake-ups on the path (client,
 * proxy, edge). Idle, that is 1-2 ms (npm run bench:probes reports it); on this shared 2-core
 * machine at load 5-6 a proxied challenge and answer took 3-22 ms over its delay, with single
 * outliers of 40 ms; so the median is held to it, every sample only to its lower bound. It stays
 * below DB_ADDED_RTT_MS: a database round trip inside a sample still fails the test. (Accuracy is
 * a figure of bench:probes, not of this suite.)
 */
const RTT_SLACK_MS = DB_ADDED_RTT_MS - 5;

describe('regions: latency measured at each region’s own edge', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const prefix = testRedisPrefix();
  const running: RunningApp[] = [];
  const proxies: DelayProxyProcess[] = [];
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const apiKeys = KeySet.fromKeys({ 'probe-1': oldKey, 'probe-2': newKey });
  let baseUrl: string;
  let shortAgeBaseUrl: string;
  const edgeUrl: Partial<Record<Region, string>> = {};
  let rotatedEdgeUrl: string;
  let shortTtlEdgeUrl: string;
  let udpPort: number;

  async function startEdge(region: string, keyId: string, extra: Record<string, string> = {}) {
    const port = await freePort();
    running.push(
      startApp('probe-edge', {
        PROBE_EDGE_REGION: region,
        PROBE_EDGE_HOST: '127.0.0.1',
        PROBE_EDGE_PORT: String(port),
        PROBE_KEYS_FILE: writeKeyFile(
          keyId === 'probe-1' ? { 'probe-1': oldKey } : { 'probe-1': oldKey, 'probe-2': newKey },
        ),
        PROBE_ACTIVE_KEY_ID: keyId,
        ...extra,
      }),
    );
    await waitForHttp(`http://127.0.0.1:${port}/live`);
    return port;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = await db.dataSource();
    for (const [region, rttMs] of Object.entries(REGIONS)) {
      const port = await startEdge(region, 'probe-1');
      const proxy = await startDelayProxyProcess({ targetPort: port, addedRttMs: rttMs });
      proxies.push(proxy);
      edgeUrl[region as Region] = `http://127.0.0.1:${proxy.port}`;
    }
    // Rotation: this edge already signs with the new key, which the API holds beside the old one.
    udpPort = await freePort();
    rotatedEdgeUrl = `http://127.0.0.1:${await startEdge('us-east', 'probe-2', { PROBE_EDGE_UDP_PORT: String(udpPort) })}`;
    shortTtlEdgeUrl = `http://127.0.0.1:${await startEdge('eu-west', 'probe-1', { PROBE_CHALLENGE_TTL_MS: '100' })}`;
    const slowDatabase = await startDelayProxyProcess({
      targetPort: Number(db.env.DATABASE_PORT),
      targetHost: db.env.DATABASE_HOST,
      addedRttMs: DB_ADDED_RTT_MS,
    });
    proxies.push(slowDatabase);

    const env = {
      ...db.env,
      REDIS_KEY_PREFIX: prefix,
      PROBE_REGIONS: Object.keys(REGIONS).join(','),
    };
    const apiPort = await freePort();
    running.push(
      startApp('api', {
        ...env,
        DATABASE_PORT: String(slowDatabase.port),
        DATABASE_HOST: '127.0.0.1',
        API_PORT: String(apiPort),
        PROBE_EDGES: Object.entries(edgeUrl)
          .map(([region, url]) => `${region}=${url}`)
          .join(','),
        PROBE_KEYS_FILE: writeKeyFile({ 'probe-1': oldKey, 'probe-2': newKey }),
        PROBE_MEASUREMENT_MAX_AGE_MS: String(MAX_AGE_MS),
      }),
    );
    running.push(
      startApp('matcher', {
        ...env,
        HEALTH_PORT: String(await freePort()),
        MATCHER_PASS_INTERVAL_MS: '100',
        MATCH_WIDENING: '0:400:100,10000:1000:200',
      }),
    );
    // A second API over the database at full speed, whose measurements expire a second after the
    // edge signed them: more samples than fit in a second at eu-west's 140 ms.
    const shortAgeApiPort = await freePort();
    running.push(
      startApp('api', {
        ...env,
        API_PORT: String(shortAgeApiPort),
        PROBE_EDGES: `eu-west=${edgeUrl['eu-west']!}`,
        PROBE_KEYS_FILE: writeKeyFile({ 'probe-1': oldKey }),
        PROBE_MEASUREMENT_MAX_AGE_MS: String(SHORT_MAX_AGE_MS),
      }),
    );
    baseUrl = `http://127.0.0.1:${apiPort}`;
    shortAgeBaseUrl = `http://127.0.0.1:${shortAgeApiPort}`;
    await waitForHttp(`${baseUrl}/health`, 200, 60_000);
    await waitForHttp(`${shortAgeBaseUrl}/health`, 200, 60_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await db?.drop();
    await deleteRedisPrefix(prefix);
  });

  async function signedIn(): Promise<{ client: PlayerClient; playerId: string; token: string }> {
    const client = new PlayerClient({ baseUrl });
    const session = await client.createSession();
    return { client, playerId: session.playerId, token: session.token };
  }

  async function edgeMeasurement(
    url: string,
    playerId: string,
    region: string,
  ): Promise<ProbeMeasurement> {
    const challenge = await postJson<ProbeChallenge>(`${url}/v1/probe/challenges`, {
      playerId,
      region,
    });
    return postJson<ProbeMeasurement>(`${url}/v1/probe/answers`, { playerId, region, challenge });
  }

  function handOver(token: string, measurement: unknown): Promise<Response> {
    return fetch(`${baseUrl}/v1/probes/measurements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(measurement),
    });
  }

  async function written(playerId: string): Promise<{ measurements: number; latencies: unknown }> {
    const [row] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM probe_measurements WHERE player_id = $1`,
      [playerId],
    );
    const latencies = await ds.query(
      `SELECT region, samples_ms FROM player_latencies WHERE player_id = $1 ORDER BY region`,
      [playerId],
    );
    return { measurements: row!.n, latencies };
  }

  async function expectProblem(response: Response, status: number, code: string): Promise<void> {
    const body = (await response.json()) as { code: string; detail: string };
    expect([response.status, body.code]).toEqual([status, code]);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(body.detail.length).toBeGreaterThan(10);
  }

  it('lists every region’s edge on the queue options', async () => {
    const { client } = await signedIn();
    const options = await client.queueOptions();
    expect(options.probeEdges).toEqual(
      Object.fromEntries(Object.entries(edgeUrl).map(([region, url]) => [region, [url]])),
    );
  });

  it('records each sample within a few ms of its edge’s distance and matches players in the nearest region', async () => {
    const players = [await signedIn(), await signedIn()];
    for (const { client } of players) {
      const probed = await client.probeAll(undefined, { samples: 3 });
      expect(probed.failed).toEqual({});
    }
    for (const { playerId } of players) {
      const rows = await ds.query<{ region: Region; samples_ms: number[] }[]>(
        `SELECT region, samples_ms FROM player_latencies WHERE player_id = $1`,
        [playerId],
      );
      expect(rows.map((row) => row.region).sort()).toEqual(Object.keys(REGIONS).sort());
      for (const { region, samples_ms } of rows) {
        expect(samples_ms).toHaveLength(3);
        for (const sample of samples_ms) {
          expect(sample).toBeGreaterThanOrEqual(REGIONS[region] - 0.5);
        }
        // A database round trip inside the samples would put every one of them 50 ms out, the
        // fastest included; a busy runner only ever adds to some (a CI run under load saw a
        // median of 200 ms for a 70 ms edge), so the fastest is the fair witness.
        const fastest = Math.min(...samples_ms);
        expect(fastest).toBeLessThanOrEqual(REGIONS[region] + RTT_SLACK_MS);
      }
      const [recorded] = await ds.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM probe_measurements WHERE player_id = $1`,
        [playerId],
      );
      expect(recorded!.n).toBe(9);
    }

    const tickets = await Promise.all(players.map(({ client }) => client.enqueue('duel')));
    const matched = await Promise.all(
      players.map(({ client }, index) =>
        client.waitForTicket(tickets[index]!.id, (ticket) => ticket.state === 'MATCHED', {
          timeoutMs: 30_000,
          pollMs: 200,
        }),
      ),
    );
    expect(matched[1]!.matchId).toBe(matched[0]!.matchId);
    const [match] = await ds.query<{ region: string }[]>(
      `SELECT region FROM matches WHERE id = $1`,
      [matched[0]!.matchId],
    );
    expect(match!.region).toBe('us-east');
  });

  it('records a chain once it is recordWithinMs old: more samples than the measurements outlive all count', async () => {
    const client = new PlayerClient({ baseUrl: shortAgeBaseUrl });
    const { playerId } = await client.createSession();
    await client.queueOptions();
    const samples = 12;
    const started = Date.now();
    // Chains end after half the measurements' lifetime and are recorded then.
    const answer = await client.probe('eu-west', { samples, recordWithinMs: SHORT_MAX_AGE_MS / 2 });
    // Taken together, the first measurement would have been older than the API accepts.
    expect(Date.now() - started).toBeGreaterThan(SHORT_MAX_AGE_MS + REGIONS['eu-west']);
    expect(answer.region).toBe('eu-west');
    expect((await written(playerId)).measurements).toBe(samples);
  });

  it('refuses a sample count outside 1 to MAX_PROBE_SAMPLES before probing', async () => {
    const { client, playerId } = await signedIn();
    await client.queueOptions();
    for (const samples of [0, -1, 1.5, MAX_PROBE_SAMPLES + 1, Number.MAX_SAFE_INTEGER])
      await expect(client.probe('eu-west', { samples })).rejects.toThrow(
        `samples must be an integer from 1 to ${MAX_PROBE_SAMPLES}`,
      );
    expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
  });

  it('records a measurement signed with the new key while the API holds both (rotation)', async () => {
    const { playerId, token } = await signedIn();
    const measurement = await edgeMeasurement(rotatedEdgeUrl, playerId, 'us-east');
    expect(measurement.keyId).toBe('probe-2');
    const response = await handOver(token, measurement);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      measurementId: measurement.measurementId,
      region: 'us-east',
      samplesMs: measurement.samplesMs,
    });
    expect((await written(playerId)).measurements).toBe(1);
  });

  describe('UDP mode (one signed datagram out, its echo back)', () => {
    it('measures over dgram, and the API records the measurement', async () => {
      const { playerId, token } = await signedIn();
      const challenge = await datagram(udpPort, challengeRequest(playerId, 'us-east'));
      expect(challenge[0]).toBe(0x02);
      const decoded = decodeProbeChallenge(challenge.subarray(1));
      expect(decoded).toMatchObject({ playerId, region: 'us-east', keyId: 'probe-2' });
      const reply = await datagram(
        udpPort,
        Buffer.concat([Buffer.of(0x03), challenge.subarray(1)]),
      );
      expect(reply[0]).toBe(0x04);
      const measurement = JSON.parse(reply.subarray(1).toString('utf8')) as ProbeMeasurement;
      expect(measurement).toMatchObject({ playerId, region: 'us-east', keyId: 'probe-2' });
      expect(measurement.samplesMs[0]).toBeLessThan(DB_ADDED_RTT_MS);
      expect((await handOver(token, measurement)).status).toBe(200);
      expect((await written(playerId)).measurements).toBe(1);
    });

    it('answers an altered challenge with an error datagram naming PROBE_BAD_SIGNATURE', async () => {
      const { playerId } = await signedIn();
      const challenge = await datagram(udpPort, challengeRequest(playerId, 'us-east'));
      const altered = Buffer.from(challenge);
      altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 0xff, altered.length - 1);
      altered[0] = 0x03;
      const reply = await datagram(udpPort, altered);
      expect(reply[0]).toBe(0x7f);
      expect(reply.subarray(3, 3 + reply.readUInt16BE(1)).toString()).toBe('PROBE_BAD_SIGNATURE');
    });
  });

  describe('refusals: each a 4xx problem+json naming the reason, and nothing written', () => {
    it('a tampered sample is PROBE_BAD_SIGNATURE', async () => {
      const { playerId, token } = await signedIn();
      const measurement = await edgeMeasurement(edgeUrl['eu-west']!, playerId, 'eu-west');
      await expectProblem(
        await handOver(token, { ...measurement, samplesMs: [1] }),
        403,
        'PROBE_BAD_SIGNATURE',
      );
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('a measurement forged under a held key id is PROBE_BAD_SIGNATURE', async () => {
      const { playerId, token } = await signedIn();
      const forged = signProbeMeasurement(
        KeySet.fromKeys({ 'probe-1': randomBytes(32) }),
        'probe-1',
        freshFields(playerId, 'eu-west'),
      );
      await expectProblem(await handOver(token, forged), 403, 'PROBE_BAD_SIGNATURE');
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('a key id the API does not hold is PROBE_UNKNOWN_KEY', async () => {
      const { playerId, token } = await signedIn();
      const unknown = signProbeMeasurement(
        KeySet.fromKeys({ 'probe-9': randomBytes(32) }),
        'probe-9',
        freshFields(playerId, 'eu-west'),
      );
      await expectProblem(await handOver(token, unknown), 403, 'PROBE_UNKNOWN_KEY');
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('a replayed measurement is PROBE_MEASUREMENT_REPLAYED and records nothing more', async () => {
      const { playerId, token } = await signedIn();
      const measurement = await edgeMeasurement(edgeUrl['ap-south']!, playerId, 'ap-south');
      expect((await handOver(token, measurement)).status).toBe(200);
      const before = await written(playerId);
      expect(before.measurements).toBe(1);
      await expectProblem(await handOver(token, measurement), 409, 'PROBE_MEASUREMENT_REPLAYED');
      expect(await written(playerId)).toEqual(before);
    });

    it("another player's measurement is PROBE_WRONG_PLAYER", async () => {
      const owner = await signedIn();
      const thief = await signedIn();
      const measurement = await edgeMeasurement(edgeUrl['us-east']!, owner.playerId, 'us-east');
      await expectProblem(await handOver(thief.token, measurement), 403, 'PROBE_WRONG_PLAYER');
      expect(await written(thief.playerId)).toEqual({ measurements: 0, latencies: [] });
      expect(await written(owner.playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it("another region's challenge answered at an edge is PROBE_WRONG_REGION", async () => {
      const { playerId } = await signedIn();
      const challenge = await postJson<ProbeChallenge>(
        `${edgeUrl['eu-west']!}/v1/probe/challenges`,
        { playerId, region: 'eu-west' },
      );
      await expectProblem(
        await post(`${edgeUrl['us-east']!}/v1/probe/answers`, {
          playerId,
          region: 'us-east',
          challenge,
        }),
        409,
        'PROBE_WRONG_REGION',
      );
      await expectProblem(
        await post(`${edgeUrl['us-east']!}/v1/probe/challenges`, { playerId, region: 'eu-west' }),
        409,
        'PROBE_WRONG_REGION',
      );
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('an expired challenge is PROBE_EXPIRED at the edge; a stale measurement PROBE_MEASUREMENT_EXPIRED at the API', async () => {
      const { playerId, token } = await signedIn();
      const challenge = await postJson<ProbeChallenge>(`${shortTtlEdgeUrl}/v1/probe/challenges`, {
        playerId,
        region: 'eu-west',
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
      await expectProblem(
        await post(`${shortTtlEdgeUrl}/v1/probe/answers`, {
          playerId,
          region: 'eu-west',
          challenge,
        }),
        410,
        'PROBE_EXPIRED',
      );
      const stale = signProbeMeasurement(apiKeys, 'probe-1', {
        ...freshFields(playerId, 'eu-west'),
        measuredAt: new Date(Date.now() - 2 * MAX_AGE_MS).toISOString(),
      });
      await expectProblem(await handOver(token, stale), 410, 'PROBE_MEASUREMENT_EXPIRED');
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('a region the API does not know is UNKNOWN_REGION', async () => {
      const { playerId, token } = await signedIn();
      const elsewhere = signProbeMeasurement(apiKeys, 'probe-1', freshFields(playerId, 'mars'));
      await expectProblem(await handOver(token, elsewhere), 404, 'UNKNOWN_REGION');
      expect(await written(playerId)).toEqual({ measurements: 0, latencies: [] });
    });

    it('bad input at the edge is a 400 problem naming the field', async () => {
      const response = await post(`${edgeUrl['eu-west']!}/v1/probe/challenges`, {
        playerId: 'nobody',
        region: 'eu-west',
      });
      await expectProblem(response, 400, 'VALIDATION_FAILED');
    });

    it('the SDK surfaces a refusal as a MatchplaneApiError with its code', async () => {
      const { client } = await signedIn();
      await client.queueOptions();
      await expect(client.probe('mars')).rejects.toBeInstanceOf(MatchplaneApiError);
    });
  });

  it('refuses to start the API, in one line, with PROBE_EDGES but no key set, or an unreadable one', async () => {
    const withoutKeys = startApp('api', {
      API_PORT: String(await freePort()),
      PROBE_REGIONS: 'eu-west',
      PROBE_EDGES: 'eu-west=http://127.0.0.1:7101',
    });
    expect(await withoutKeys.exited).toBe(1);
    expect(withoutKeys.output().trim()).toBe(
      'api: Invalid configuration: PROBE_EDGES is set but PROBE_KEYS_FILE is not: the measurements of the edges could not be verified',
    );
    const unreadable = startApp('api', {
      API_PORT: String(await freePort()),
      PROBE_KEYS_FILE: '/nonexistent/probe-keys.json',
    });
    expect(await unreadable.exited).toBe(1);
    expect(unreadable.output().trim().split('\n').pop()).toBe(
      'api: failed to start: PROBE_KEYS_FILE "/nonexistent/probe-keys.json" holds no usable probe keys: key file /nonexistent/probe-keys.json: cannot be read (ENOENT)',
    );
  });

  it('refuses to start an edge without key material, in one line', async () => {
    const edge = startApp('probe-edge', {
      PROBE_EDGE_REGION: 'eu-west',
      PROBE_EDGE_PORT: String(await freePort()),
      PROBE_KEYS_FILE: '/nonexistent/probe-keys.json',
      PROBE_ACTIVE_KEY_ID: 'probe-1',
    });
    expect(await edge.exited).toBe(1);
    expect(edge.output().trim()).toBe(
      'probe-edge: failed to start: PROBE_KEYS_FILE "/nonexistent/probe-keys.json" holds no usable probe keys: key file /nonexistent/probe-keys.json: cannot be read (ENOENT)',
    );
  });
});

function challengeRequest(playerId: string, region: string): Buffer {
  const text = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([Buffer.of(0x01), text(playerId), text(region)]);
}

/** Sends one datagram from a fresh socket and resolves with the first one back. */
function datagram(port: number, message: Buffer): Promise<Buffer> {
  const socket = createSocket('udp4');
  return new Promise<Buffer>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no datagram back within 5 s')), 5_000);
    socket.once('message', (reply) => {
      clearTimeout(timer);
      resolve(reply);
    });
    socket.send(message, port, '127.0.0.1');
  }).finally(() => socket.close());
}

function freshFields(playerId: string, region: string) {
  return {
    measurementId: randomUUID(),
    playerId,
    region,
    samplesMs: [12.5],
    measuredAt: new Date().toISOString(),
  };
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function postJson<T>(url: string, body: unknown): Promise<T> {
  const response = await post(url, body);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
