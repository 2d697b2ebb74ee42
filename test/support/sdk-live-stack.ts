import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeKeyFile } from './app-sandbox';
import { matchRow, startControlPlane, type ControlPlane } from './journey';
import { freePort, startApp, waitForHttp, type RunningApp } from './processes';

/*
 * The stack an SDK's live journey plays against (test/sdk-live/*-live.spec.ts, issue 36 item 5):
 * an API with eu-west's probe edge, a dispatcher, a matcher and the allocator with the local
 * provider (which launches the reference game server, verifying the join tokens).
 */

export interface SdkLiveStack {
  readonly plane: ControlPlane;
  close(): Promise<void>;
}

export interface SdkLiveStackOptions {
  /** The allocator's LOCAL_SERVER_ENTRY (run with node): default the reference game server. */
  readonly gameServerEntry?: string;
  /** The game servers' variables, over JOURNEY_GAME_SERVER_ENV. */
  readonly gameServerEnv?: Record<string, string>;
  /** Every app's variables, over JOURNEY_ENV (e.g. QUEUE_MODES). */
  readonly env?: Record<string, string>;
}

export async function startSdkLiveStack(options: SdkLiveStackOptions = {}): Promise<SdkLiveStack> {
  const probeKeyFile = writeKeyFile({ 'probe-1': randomBytes(32) });
  let edge: RunningApp | undefined;
  try {
    const edgePort = await freePort();
    edge = startApp('probe-edge', {
      PROBE_EDGE_REGION: 'eu-west',
      PROBE_EDGE_HOST: '127.0.0.1',
      PROBE_EDGE_PORT: String(edgePort),
      PROBE_KEYS_FILE: probeKeyFile,
      PROBE_ACTIVE_KEY_ID: 'probe-1',
    });
    await waitForHttp(`http://127.0.0.1:${edgePort}/live`);
    const plane = await startControlPlane({
      apis: 1,
      ...(options.env ? { env: options.env } : {}),
      appEnv: {
        api: { PROBE_EDGES: `eu-west=http://127.0.0.1:${edgePort}`, PROBE_KEYS_FILE: probeKeyFile },
        ...(options.gameServerEntry
          ? { allocator: { LOCAL_SERVER_ENTRY: options.gameServerEntry } }
          : {}),
      },
      ...(options.gameServerEnv ? { gameServerEnv: options.gameServerEnv } : {}),
    });
    const started = edge;
    return {
      plane,
      async close() {
        await plane.close();
        await started.stop();
        rmSync(path.dirname(probeKeyFile), { recursive: true, force: true });
      },
    };
  } catch (error) {
    await edge?.stop();
    rmSync(path.dirname(probeKeyFile), { recursive: true, force: true });
    throw error;
  }
}

/** Runs a program to its end (or the timeout): its exit code and its stdout then stderr. */
export function runProgram(
  file: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 8 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * The program's "<suite>: N passed, M failed" line: [passed, failed], or an error with the
 * program's output and the stack's diagnostics when it is missing or the program failed.
 */
function journeySummary(
  suite: string,
  result: { code: number; output: string },
  plane: ControlPlane,
): [number, number] {
  const summary = new RegExp(`^${suite}: (\\d+) passed, (\\d+) failed$`, 'm').exec(result.output);
  if (result.code !== 0 || !summary) {
    throw new Error(`${suite} exited ${result.code}:\n${result.output}\n${plane.diagnostics()}`);
  }
  return [Number(summary[1]), Number(summary[2])];
}

/**
 * The control plane's own record of the journey: one completed match at `revision`, the edge's
 * measurements.
 */
async function expectOneCompletedMatch(plane: ControlPlane, revision: number): Promise<void> {
  const matches = await plane.ds.query<{ match_id: string }[]>(
    `SELECT DISTINCT match_id FROM match_participants`,
  );
  expect(matches).toHaveLength(1);
  expect(await matchRow(plane.ds, matches[0]!.match_id)).toMatchObject({
    state: 'COMPLETED',
    revision,
  });
  const measurements = await plane.ds.query<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM probe_measurements`,
  );
  expect(measurements[0]?.n).toBeGreaterThanOrEqual(2);
}

/**
 * The game server's presence reports, as the control plane recorded them: one player left once
 * and came back (not abandoned, no longer LEFT), the other `players - 1` never left.
 */
export async function expectOnePlayerRejoined(plane: ControlPlane, players: number): Promise<void> {
  const presence = await plane.ds.query<
    { leave_count: number; left: boolean; abandoned: boolean }[]
  >(
    `SELECT leave_count, left_at IS NOT NULL AS left, abandoned_at IS NOT NULL AS abandoned
       FROM match_participants ORDER BY leave_count`,
  );
  const stayed = { leave_count: 0, left: false, abandoned: false };
  expect(presence).toEqual([
    ...Array.from({ length: players - 1 }, () => stayed),
    { leave_count: 1, left: false, abandoned: false },
  ]);
}

export interface LiveJourneySpec {
  /** The suite's name, also the program's summary line prefix ("<suite>: N passed, M failed"). */
  readonly suite: string;
  readonly sdk: string;
  /** What the journey plays, for the test's title; default "plays a duel". */
  readonly plays?: string;
  /** Builds the program before the stack starts (e.g. make live), if it needs building. */
  readonly build?: () => Promise<void>;
  /** The program and its arguments, given the running stack. */
  readonly command: (plane: ControlPlane) => { file: string; args: string[]; cwd: string };
  readonly timeoutMs: number;
  /** The stack's game servers, when not the reference one (the SDK's own server client plays them). */
  readonly stack?: SdkLiveStackOptions;
  /** The completed match's last revision: 5 on the happy path, more with presence changes. */
  readonly matchRevision?: number;
  /** Further checks of the control plane's record once the journey passed. */
  readonly verify?: (plane: ControlPlane) => Promise<void>;
}

/**
 * One SDK's live journey as a Jest suite: starts the stack, runs the program, requires its checks
 * to pass and the control plane's own record to agree. sdks/run-tests.sh counts the program's
 * summary line from the file named by <SUITE>_OUTPUT (e.g. GODOT_LIVE_OUTPUT).
 */
export function describeLiveJourney(spec: LiveJourneySpec): void {
  const plays = spec.plays ?? 'plays a duel';
  describe(`${spec.suite}: the ${spec.sdk} player client ${plays} through the whole control plane`, () => {
    let stack: SdkLiveStack | undefined;

    beforeAll(async () => {
      await spec.build?.();
      stack = await startSdkLiveStack(spec.stack);
    }, 180_000);

    afterAll(async () => {
      await stack?.close();
    }, 60_000);

    it(
      'signs in, probes at the edge, queues, is notified, joins with its token and completes',
      async () => {
        const plane = stack!.plane;
        const { file, args, cwd } = spec.command(plane);
        const result = await runProgram(file, args, cwd, spec.timeoutMs);
        const outputFile = process.env[`${spec.suite.toUpperCase().replace(/-/g, '_')}_OUTPUT`];
        if (outputFile) writeFileSync(outputFile, result.output);
        const [passed, failed] = journeySummary(spec.suite, result, plane);
        expect(failed).toBe(0);
        expect(passed).toBeGreaterThan(20);
        await expectOneCompletedMatch(plane, spec.matchRevision ?? 5);
        await spec.verify?.(plane);
      },
      spec.timeoutMs + 10_000,
    );
  });
}
