import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/*
 * The chaos run in its short form (`npm run chaos` with a few faults and a bounded time): its own
 * PostgreSQL cluster and Redis server, the whole stack on them, SDK players through full journeys,
 * and during the run an API replica and a dispatcher SIGKILLed and restarted, Redis and PostgreSQL
 * crashed and restarted, the game server of a match in progress SIGKILLed. The program compares the outbox rows committed in its PostgreSQL with
 * what each player's subscription delivered; this suite holds it to the targets.
 */

const FAULTS = ['api#0', 'dispatcher#0', 'redis', 'postgres', 'game-server'];
/** The apps' SERVER_HEARTBEAT_TIMEOUT_MS in the chaos run, and the 2 s the issue allows past it. */
const PLAYERS_FREE_BOUND_MS = 10_000 + 2_000;
/**
 * The program's own target is 5 s per fault; on a shared 2-core CI runner a restarted app takes
 * longer to come up, so the suite allows twice that (a reliability bound, not a speed figure).
 */
const STALL_BOUND_MS = 10_000;

interface ChaosResult {
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
  unexpected_exits: string[];
  server_loss: {
    matches: number;
    players_free_ms: { p50: number; p99: number; max: number };
    players_stranded: number;
    ended: Record<string, number>;
  };
}

describe('chaos run (short form)', () => {
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';

  afterAll(async () => {
    // Interrupted (a timeout): SIGINT makes the program tear down its clusters and apps.
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
  });

  it('loses, strands, duplicates and reorders nothing while apps, Redis and PostgreSQL are killed', async () => {
    child = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'dist/test/chaos/chaos.main.js'),
        '--duration=60',
        '--players=4',
        `--faults=${FAULTS.join(',')}`,
        '--down=1500',
      ],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | string>((resolve) =>
      child!.once('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown')),
    );

    const last = stdout.trim().split('\n').at(-1) ?? '';
    let result: ChaosResult;
    try {
      result = JSON.parse(last) as ChaosResult;
    } catch {
      throw new Error(`no result line (exit ${code}); its output:\n${stderr}\n${stdout}`);
    }
    const context = `${stderr}\n${last}`;
    expect({ context, result }).toMatchObject({
      result: {
        lost_events: 0,
        stranded_matches: 0,
        stranded_tickets: 0,
        duplicate_deliveries: 0,
        order_violations: 0,
        unexpected_exits: [],
      },
    });
    // Not vacuous: players played through the faults and their events were compared.
    expect(result.journeys_finished).toBeGreaterThan(0);
    expect(result.events_delivered).toBeGreaterThan(0);
    expect(result.events_delivered).toBeLessThanOrEqual(result.events_expected);
    expect(Object.keys(result.longest_stall_ms_by_fault)).toEqual(FAULTS);
    // The killed game server's match failed SERVER_LOST and each of its players queued again in time.
    expect(result.server_loss).toMatchObject({
      matches: 1,
      players_stranded: 0,
      ended: { 'FAILED SERVER_LOST': 1 },
    });
    expect(result.server_loss.players_free_ms.max).toBeLessThanOrEqual(PLAYERS_FREE_BOUND_MS);
    for (const [fault, stallMs] of Object.entries(result.longest_stall_ms_by_fault))
      expect({ fault, stallMs, within: stallMs <= STALL_BOUND_MS }).toMatchObject({ within: true });
  }, 300_000);
});
