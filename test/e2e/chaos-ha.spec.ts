import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/*
 * The chaos run's HA topology in a short form (`npm run chaos -- --topology=ha` with a few
 * faults): a Sentinel group and a PostgreSQL primary with its standby, reached by the apps only
 * through REDIS_SENTINELS and a multi-host DATABASE_URL; two matchers on duel's shards. While SDK
 * players play, a matcher is SIGKILLed (the other takes its shard), the Redis master is SIGKILLed
 * (Sentinel promotes the replica) and the PostgreSQL primary crashed for good with the standby
 * promoted. The figures are read from the promoted standby at the end: had an app not followed
 * the new primary or the new master, events would be lost and matches or tickets stranded.
 */

const FAULTS = ['matcher#0', 'redis-master', 'postgres-primary'];

interface ChaosResult {
  topology: string;
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

describe('chaos run, HA topology (short form)', () => {
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';

  afterAll(async () => {
    // Interrupted (a timeout): SIGINT makes the program tear down its servers and apps.
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
  });

  it('loses, strands, duplicates and reorders nothing across a Redis master and a PostgreSQL primary failover', async () => {
    child = spawn(
      process.execPath,
      [
        path.join(REPO_ROOT, 'dist/test/chaos/chaos.main.js'),
        '--topology=ha',
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
    expect({ context: `${stderr}\n${last}`, result }).toMatchObject({
      result: {
        topology: 'ha',
        lost_events: 0,
        stranded_matches: 0,
        stranded_tickets: 0,
        duplicate_deliveries: 0,
        order_violations: 0,
        unexpected_exits: [],
      },
    });
    // A request caught between the primary's crash and the promotion answers 503 (which the SDK
    // retries), never 500.
    expect({ context: last, internalErrors: result.http_status_counts['500'] ?? 0 }).toMatchObject({
      internalErrors: 0,
    });
    // Not vacuous: players played through the faults and their events were compared.
    expect(result.journeys_finished).toBeGreaterThan(0);
    expect(result.events_delivered).toBeGreaterThan(0);
    expect(Object.keys(result.longest_stall_ms_by_fault)).toEqual(FAULTS);
  }, 300_000);
});
