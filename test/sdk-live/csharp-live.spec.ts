import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeKeyFile } from '../support/app-sandbox';
import { matchRow, startControlPlane, type ControlPlane } from '../support/journey';
import { freePort, REPO_ROOT, startApp, waitForHttp, type RunningApp } from '../support/processes';

/*
 * The C# player client plays one duel to COMPLETED against the real stack (issue 36 item 5): an
 * API with eu-west's probe edge, a dispatcher, a matcher and the allocator with the local provider
 * (which launches the reference game server, verifying the join tokens). sdks/csharp/live/
 * LiveJourney.cs does the playing and counts its checks; sdks/run-tests.sh runs this file as the
 * "csharp-live" suite (it is not part of `npm test`: it needs Debian's mono).
 */

const CSHARP_DIR = path.join(REPO_ROOT, 'sdks/csharp');
const JOURNEY_TIMEOUT_MS = 150_000;

function run(
  file: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: CSHARP_DIR, timeout: timeoutMs, maxBuffer: 8 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

describe('csharp-live: the C# player client plays a duel through the whole control plane', () => {
  let plane: ControlPlane | undefined;
  let edge: RunningApp | undefined;
  let probeKeyFile: string | undefined;

  beforeAll(async () => {
    const built = await run('make', ['-s', 'live'], 120_000);
    if (built.code !== 0) throw new Error(`make -C sdks/csharp live failed:\n${built.output}`);
    const probeKey = { 'probe-1': randomBytes(32) };
    probeKeyFile = writeKeyFile(probeKey);
    const edgePort = await freePort();
    edge = startApp('probe-edge', {
      PROBE_EDGE_REGION: 'eu-west',
      PROBE_EDGE_HOST: '127.0.0.1',
      PROBE_EDGE_PORT: String(edgePort),
      PROBE_KEYS_FILE: probeKeyFile,
      PROBE_ACTIVE_KEY_ID: 'probe-1',
    });
    await waitForHttp(`http://127.0.0.1:${edgePort}/live`);
    plane = await startControlPlane({
      apis: 1,
      appEnv: {
        api: { PROBE_EDGES: `eu-west=http://127.0.0.1:${edgePort}`, PROBE_KEYS_FILE: probeKeyFile },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await plane?.close();
    await edge?.stop();
    if (probeKeyFile) rmSync(path.dirname(probeKeyFile), { recursive: true, force: true });
  }, 60_000);

  it(
    'signs in, probes at the edge, queues, is notified, joins with its token and completes',
    async () => {
      const started = plane!;
      const result = await run(
        'mono',
        [
          path.join(CSHARP_DIR, 'build/LiveJourney.exe'),
          started.apiUrl(0),
          started.keys.file,
          'duel',
        ],
        JOURNEY_TIMEOUT_MS,
      );
      // sdks/run-tests.sh counts the program's "csharp-live: N passed, M failed" line from here.
      if (process.env.CSHARP_LIVE_OUTPUT)
        writeFileSync(process.env.CSHARP_LIVE_OUTPUT, result.output);
      const summary = /^csharp-live: (\d+) passed, (\d+) failed$/m.exec(result.output);
      if (result.code !== 0 || !summary) {
        throw new Error(
          `LiveJourney exited ${result.code}:\n${result.output}\n${started.diagnostics()}`,
        );
      }
      expect(Number(summary[2])).toBe(0);
      expect(Number(summary[1])).toBeGreaterThan(20);

      // The control plane's own record agrees: one completed match, and the edge's measurements.
      const matches = await started.ds.query<{ match_id: string }[]>(
        `SELECT DISTINCT match_id FROM match_participants`,
      );
      expect(matches).toHaveLength(1);
      expect(await matchRow(started.ds, matches[0]!.match_id)).toMatchObject({
        state: 'COMPLETED',
        revision: 5,
      });
      const measurements = await started.ds.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM probe_measurements`,
      );
      expect(measurements[0]?.n).toBeGreaterThanOrEqual(2);
    },
    JOURNEY_TIMEOUT_MS + 10_000,
  );
});
