import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './processes';

/** The JSON line's figures every suite reads (chaos.main.ts prints more). */
export interface ChaosResult {
  topology: string;
  journeys_started: number;
  journeys_finished: number;
  lost_events: number;
  stranded_matches: number;
  stranded_tickets: number;
  duplicate_deliveries: number;
  order_violations: number;
  longest_stall_ms_by_fault: Record<string, number>;
  events_expected: number;
  events_delivered: number;
  http_status_counts: Record<string, number>;
  unexpected_exits: string[];
}

/** What one chaos run printed: its JSON line parsed, that line as text, and its progress lines. */
export interface ChaosOutcome<Result> {
  result: Result;
  last: string;
  stderr: string;
}

/**
 * `npm run chaos` as the e2e suites run it: the built program with `args`, its JSON line parsed
 * (a run that printed none fails with its whole output). `interrupt()` in afterAll: SIGINT makes
 * the program tear down its servers and apps if the suite timed out.
 */
export class ChaosProgram {
  private child: ChildProcess | undefined;

  async run<Result>(args: readonly string[]): Promise<ChaosOutcome<Result>> {
    const child = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'dist/test/chaos/chaos.main.js'), ...args],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | string>((resolve) =>
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown')),
    );
    const last = stdout.trim().split('\n').at(-1) ?? '';
    try {
      return { result: JSON.parse(last) as Result, last, stderr };
    } catch {
      throw new Error(`no result line (exit ${code}); its output:\n${stderr}\n${stdout}`);
    }
  }

  /** The short form the e2e suites run: 60 s, 4 players, `faults` in order, each down 1.5 s. */
  runShort<Result extends ChaosResult>(
    faults: readonly string[],
    extraArgs: readonly string[] = [],
  ): Promise<ChaosOutcome<Result>> {
    return this.run<Result>([
      ...extraArgs,
      '--duration=60',
      '--players=4',
      `--faults=${faults.join(',')}`,
      '--down=1500',
    ]);
  }

  async interrupt(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  }
}

/**
 * The targets every topology holds whatever the machine's load: nothing lost, stranded,
 * duplicated or reordered, no app exited on its own; and not vacuously (players played through
 * each of `faults` and their events were compared).
 */
export function expectNothingLost(
  { result, last, stderr }: ChaosOutcome<ChaosResult>,
  faults: readonly string[],
): void {
  // The run's own "lost:" lines (event, commit time, where the feed stood) are in the diff when any is.
  const lostLines = stderr.split('\n').filter((line) => line.includes('lost: '));
  expect({ context: `${stderr}\n${last}`, lostLines, result }).toMatchObject({
    lostLines: [],
    result: {
      lost_events: 0,
      stranded_matches: 0,
      stranded_tickets: 0,
      duplicate_deliveries: 0,
      order_violations: 0,
      unexpected_exits: [],
    },
  });
  expect(result.journeys_finished).toBeGreaterThan(0);
  expect(result.events_delivered).toBeGreaterThan(0);
  expect(result.events_delivered).toBeLessThanOrEqual(result.events_expected);
  expect(Object.keys(result.longest_stall_ms_by_fault)).toEqual(faults);
}
