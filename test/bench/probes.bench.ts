/*
 * bench:probes — latency measured at regional probe edges. Three edges (processes) behind
 * delaying proxies (--rtts, default 15,70,140 ms), the API with its database --db-latency-ms away
 * (default 50), and --players SDK players probing every region --samples times: rtt_error_ms is
 * |recorded - injected| over every recorded sample. Then one edge at saturation (closed loop,
 * challenge and answer counted as one; then in rounds, a sample a request, as the SDK takes its
 * samples after the first) and a bare Node HTTP server (one POST each) under the same load
 * generator in the same run. Progress on stderr; one JSON line last on stdout.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig, ServiceConfig } from '@matchplane/config';
import { dataSourceOptions, Migrator } from '@matchplane/persistence';
import { allMigrations } from '@matchplane/migrations';
import { PlayerClient } from '@matchplane/sdk/node';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { parseFlags, usage, UsageError, writeResults, type FlagSpec } from './bench.cli';
import {
  freePort,
  installCleanup,
  REPO_ROOT,
  round1,
  startNodeChild,
  waitUntil,
  type BenchChild,
} from './bench.processes';

const LOCALHOST = '127.0.0.1';
const DATABASE = 'mp_bench_probes';
const REGIONS = ['eu-west', 'us-east', 'ap-south'] as const;

const FLAGS: FlagSpec[] = [
  { name: 'players', description: 'players probing', int: { min: 1, max: 1_000, default: 20 } },
  {
    name: 'samples',
    description: 'probe samples per player and region',
    int: { min: 1, max: 50, default: 5 },
  },
  {
    name: 'rtts',
    description: 'added RTT (ms) of each region’s proxy, comma-separated (three)',
    string: { default: '15,70,140' },
  },
  {
    name: 'db-latency-ms',
    description: 'added RTT of every API database round trip',
    int: { min: 0, max: 1_000, default: 50 },
  },
  {
    name: 'seconds',
    description: 'measured time of each saturation phase (edge, bare HTTP)',
    int: { min: 1, max: 300, default: 10 },
  },
  {
    name: 'concurrency',
    description: 'requests in flight in the saturation phases',
    int: { min: 1, max: 1_024, default: 64 },
  },
  {
    name: 'results',
    description: 'file the figures are written to',
    string: { default: 'test/bench/results/probes.json' },
  },
];

function progress(line: string): void {
  process.stderr.write(`[bench:probes] ${line}\n`);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1_024 });

/** POSTs `body` (serialised unless it is already JSON text). */
function post(port: number, url: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    const request = http.request(
      {
        host: LOCALHOST,
        port,
        method: 'POST',
        path: url,
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** Completed calls per second of `work` over `seconds`, `concurrency` loops; errors are thrown. */
async function closedLoop(
  seconds: number,
  concurrency: number,
  work: (loop: number) => Promise<void>,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      while (performance.now() < deadline) {
        await work(loop);
        done += 1;
      }
    }),
  );
  return Math.round(done / ((performance.now() - started) / 1000));
}

function percentiles(values: readonly number[]): { p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    round1(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0);
  return { p50: at(0.5), p95: at(0.95), max: at(1) };
}

async function main(): Promise<void> {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2), FLAGS);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(
      `${error.message}\n${usage('npm run bench:probes --', 'RTT error and edge throughput', FLAGS)}`,
    );
    process.exit(2);
  }
  const rtts = (flags.rtts as string).split(',').map(Number);
  if (rtts.length !== REGIONS.length || rtts.some((rtt) => !Number.isFinite(rtt) || rtt < 0)) {
    process.stderr.write(`--rtts must be ${REGIONS.length} non-negative numbers\n`);
    process.exit(2);
  }
  const seconds = flags.seconds as number;
  const concurrency = flags.concurrency as number;
  const dbLatencyMs = flags['db-latency-ms'] as number;
  const service = { ...loadConfig(ServiceConfig), DATABASE_HOST: LOCALHOST, REDIS_HOST: LOCALHOST };
  const admin = async (sql: string) => {
    const client = new Client({
      host: LOCALHOST,
      port: service.DATABASE_PORT,
      user: service.DATABASE_USER,
      password: service.DATABASE_PASSWORD,
      database: loadConfig(MigrateConfig).DATABASE_ADMIN_NAME,
    });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const children: BenchChild[] = [];
  installCleanup(async () => {
    for (const child of children) await child.stop(5_000);
  });
  const start = (name: string, script: string, args: string[], env: Record<string, string>) => {
    const child = startNodeChild(name, script, args, {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LOG_LEVEL: 'warn',
      ...env,
    });
    children.push(child);
    return child;
  };
  /** One proxy process for every (target, added RTT) pair: one event loop, one spinning pump. */
  const proxies = async (name: string, routes: readonly { port: number; addedRttMs: number }[]) => {
    const child = start(
      name,
      'dist/apps/demo/src/delay-proxy.main.js',
      routes.flatMap(({ port, addedRttMs }) => [`${LOCALHOST}:${port}`, String(addedRttMs)]),
      {},
    );
    let ports: number[] = [];
    await waitUntil(() => {
      const line = /"ports":(\[[\d,]*\])/.exec(child.output())?.[1];
      ports = line ? (JSON.parse(line) as number[]) : [];
      return ports.length === routes.length;
    }, `proxies ${name}`);
    return ports;
  };

  progress(
    `setup: database ${DATABASE} (${dbLatencyMs} ms away from the API), edges ${rtts.join('/')} ms`,
  );
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${DATABASE}`);
  const dataSource = new DataSource(
    dataSourceOptions({ ...service, DATABASE_NAME: DATABASE }, { migrations: allMigrations }),
  );
  await dataSource.initialize();
  await new Migrator(dataSource).up();

  const keysFile = path.join(mkdtempSync(path.join(tmpdir(), 'mp-probe-keys-')), 'keys.json');
  writeFileSync(keysFile, JSON.stringify({ 'bench-1': randomBytes(32).toString('base64') }));
  const edgeEnv = (region: string, port: number) => ({
    PROBE_EDGE_REGION: region,
    PROBE_EDGE_HOST: LOCALHOST,
    PROBE_EDGE_PORT: String(port),
    PROBE_KEYS_FILE: keysFile,
    PROBE_ACTIVE_KEY_ID: 'bench-1',
  });
  const edgeUrls: string[] = [];
  const injected = new Map<string, number>();
  const edgePorts: number[] = [];
  for (const region of REGIONS) {
    const port = await freePort();
    start(`edge-${region}`, 'dist/apps/probe-edge/src/main.js', [], edgeEnv(region, port));
    await waitUntil(
      async () => (await fetch(`http://${LOCALHOST}:${port}/live`)).ok,
      `edge ${region}`,
    );
    edgePorts.push(port);
  }
  const proxied = await proxies(
    'proxy-regions',
    REGIONS.map((_, index) => ({ port: edgePorts[index]!, addedRttMs: rtts[index]! })),
  );
  for (const [index, region] of REGIONS.entries()) {
    edgeUrls.push(`${region}=http://${LOCALHOST}:${proxied[index]!}`);
    injected.set(region, rtts[index]!);
  }
  // The database's own proxy process: the API's traffic does not share the regions' pump.
  const [dbPort] = await proxies('proxy-db', [
    { port: service.DATABASE_PORT, addedRttMs: dbLatencyMs },
  ]);
  const apiPort = await freePort();
  start('api', 'dist/apps/api/src/main.js', [], {
    DATABASE_HOST: LOCALHOST,
    DATABASE_PORT: String(dbPort),
    DATABASE_USER: service.DATABASE_USER,
    DATABASE_NAME: DATABASE,
    REDIS_HOST: LOCALHOST,
    REDIS_PORT: String(service.REDIS_PORT),
    REDIS_KEY_PREFIX: `mpbench-probes-${process.pid}`,
    API_PORT: String(apiPort),
    PROBE_REGIONS: REGIONS.join(','),
    PROBE_EDGES: edgeUrls.join(','),
    PROBE_KEYS_FILE: keysFile,
    API_RATE_LIMIT_PROBES_PER_SESSION: '0',
    ...(service.DATABASE_PASSWORD ? { DATABASE_PASSWORD: service.DATABASE_PASSWORD } : {}),
    ...(service.REDIS_PASSWORD ? { REDIS_PASSWORD: service.REDIS_PASSWORD } : {}),
  });
  const baseUrl = `http://${LOCALHOST}:${apiPort}`;
  await waitUntil(async () => (await fetch(`${baseUrl}/health`)).ok, 'the API', {
    timeoutMs: 60_000,
  });

  // ---- RTT error: every sample the API recorded against the delay its edge's proxy adds --------
  const players = flags.players as number;
  const samples = flags.samples as number;
  progress(`rtt: ${players} players x ${REGIONS.length} regions x ${samples} samples`);
  for (let player = 0; player < players; player += 1) {
    const client = new PlayerClient({ baseUrl });
    await client.createSession();
    const probed = await client.probeAll(undefined, { samples });
    const failed = Object.entries(probed.failed);
    if (failed.length > 0)
      throw new Error(`probe failed: ${failed[0]![0]}: ${failed[0]![1].message}`, {
        cause: failed[0]![1],
      });
  }
  const rows = await dataSource.query<{ region: string; samples_ms: number[] }[]>(
    `SELECT region, samples_ms FROM probe_measurements`,
  );
  const errors = rows.flatMap(({ region, samples_ms }) =>
    samples_ms.map((sample) => Math.abs(sample - (injected.get(region) ?? Number.NaN))),
  );
  await dataSource.destroy();

  // ---- Edge at saturation: challenge + answer as one, straight to the edge (no proxy) -----------
  const edgePort = await freePort();
  start('edge-saturation', 'dist/apps/probe-edge/src/main.js', [], edgeEnv('eu-west', edgePort));
  await waitUntil(async () => (await fetch(`http://${LOCALHOST}:${edgePort}/live`)).ok, 'the edge');
  const playerId = randomUUID();
  const challengeAndAnswer = async () => {
    const challenge = await post(edgePort, '/v1/probe/challenges', { playerId, region: 'eu-west' });
    // Echoed byte for byte as the SDK does (EdgeProber): a client never re-serialises it.
    const answer = await post(
      edgePort,
      '/v1/probe/answers',
      `{"playerId":"${playerId}","region":"eu-west","challenge":${challenge.body}}`,
    );
    if (answer.status !== 200) throw new Error(`edge answered ${answer.status}: ${answer.body}`);
  };
  progress(`edge: ${concurrency} in flight for ${seconds} s`);
  await closedLoop(Math.min(2, seconds), concurrency, challengeAndAnswer);
  const edgeRate = await closedLoop(seconds, concurrency, challengeAndAnswer);

  // Rounds, as the SDK takes samples after the first: each answer brings the next challenge, so
  // a sample is one request. Every loop keeps its own challenge going.
  const nextChallenges: (string | undefined)[] = [];
  const round = async (loop: number) => {
    const challenge =
      nextChallenges[loop] ??
      (await post(edgePort, '/v1/probe/challenges', { playerId, region: 'eu-west' })).body;
    const reply = await post(
      edgePort,
      '/v1/probe/rounds',
      `{"playerId":"${playerId}","region":"eu-west","challenge":${challenge}}`,
    );
    if (reply.status !== 200) throw new Error(`edge answered ${reply.status}: ${reply.body}`);
    nextChallenges[loop] = JSON.stringify(
      (JSON.parse(reply.body) as { challenge: unknown }).challenge,
    );
  };
  progress(`edge rounds: ${concurrency} in flight for ${seconds} s`);
  await closedLoop(Math.min(2, seconds), concurrency, round);
  const roundRate = await closedLoop(seconds, concurrency, round);

  const barePort = await freePort();
  const bare = start('bare-http', 'dist/test/bench/bare-http.main.js', [String(barePort)], {});
  await waitUntil(() => bare.output().includes('bare-http ready'), 'the bare HTTP server');
  const bareRequest = async () => {
    const reply = await post(barePort, '/bare', { playerId, region: 'eu-west' });
    if (reply.status !== 200) throw new Error(`bare server answered ${reply.status}`);
  };
  progress(`bare http: ${concurrency} in flight for ${seconds} s`);
  await closedLoop(Math.min(2, seconds), concurrency, bareRequest);
  const bareRate = await closedLoop(seconds, concurrency, bareRequest);

  for (const child of children) await child.stop(5_000);
  agent.destroy();
  const result = {
    bench: 'probes',
    injected_db_latency_ms: dbLatencyMs,
    injected_rtts_ms: Object.fromEntries(injected),
    samples: errors.length,
    rtt_error_ms: percentiles(errors),
    edge_challenges_per_s: edgeRate,
    bare_http_per_s: bareRate,
    edge_vs_bare: Math.round((edgeRate / Math.max(1, bareRate)) * 100) / 100,
    edge_rounds_per_s: roundRate,
    edge_rounds_vs_bare: Math.round((roundRate / Math.max(1, bareRate)) * 100) / 100,
    concurrency,
    seconds,
  };
  progress(`results written to ${writeResults(REPO_ROOT, flags.results as string, result)}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench:probes] failed: ${(error as Error).stack ?? String(error)}\n`);
  console.error((error as Error).cause);
  process.exit(1);
});
