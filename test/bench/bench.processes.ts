import { spawn, type ChildProcess } from 'node:child_process';
import type Redis from 'ioredis';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** The repository root, from dist/test/bench/ (compiled) or test/bench/ (ts-node). */
export const REPO_ROOT = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..',
);

const OUTPUT_KEPT = 16_000;

export interface BenchChild {
  name: string;
  pid: number;
  child: ChildProcess;
  /** The last few kilobytes the process wrote to stdout and stderr. */
  output(): string;
  exited: Promise<number | string>;
  alive(): boolean;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<number | string>;
}

const running = new Set<BenchChild>();

/** Starts a node script (relative to the repository root) as a child the bench cleans up. */
export function startNodeChild(
  name: string,
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  nodeOptions: readonly string[] = [],
): BenchChild {
  return startChild(
    name,
    process.execPath,
    [...nodeOptions, path.join(REPO_ROOT, script), ...args],
    env,
  );
}

/** Starts a program as a child whose exit the bench awaits and cleans up. */
export function startChild(
  name: string,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): BenchChild {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const handle: BenchChild = {
    name,
    pid: child.pid,
    child,
    output: () => output,
    exited,
    alive,
    async stop(graceMs = 10_000) {
      if (alive()) child.kill('SIGTERM');
      const killer = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(killer);
      }
    },
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/**
 * Children die with the bench: on Ctrl-C or SIGTERM they get SIGTERM (so a profiled dispatcher
 * still writes its profile) and the bench exits 130; on any other exit they get SIGKILL.
 */
let stopping = false;

/** True once Ctrl-C or SIGTERM arrived: the bench's own flow then leaves the clean-up to it. */
export function isStopping(): boolean {
  return stopping;
}

export function installCleanup(onSignal: () => Promise<void>): void {
  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: stopping ${running.size} child process(es)\n`);
    const deadline = setTimeout(() => process.exit(130), 15_000);
    void Promise.allSettled([...running].map((child) => child.stop(5_000)))
      .then(() => onSignal())
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(deadline);
        process.exit(130);
      });
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  process.once('exit', () => {
    for (const child of running) if (child.alive()) child.child.kill('SIGKILL');
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until `probe` returns true; bounded by `timeoutMs`. */
export async function waitUntil(
  probe: () => Promise<boolean> | boolean,
  what: string,
  { timeoutMs = 30_000, intervalMs = 100 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(probe()).catch(() => false)) return;
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

// ---- CPU accounting from /proc -------------------------------------------------------------

const CLOCK_TICKS_PER_S = 100; // USER_HZ, 100 on every Linux architecture Node runs on

/** utime + stime of a process in clock ticks, or undefined once it is gone. */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function readProc(pid: string, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  at: number;
  byPid: Map<number, number>;
  /** Ticks of the tracked services' processes (see {@link sampleCpu}). */
  byService: Map<string, number>;
  machineBusy: number;
}

/**
 * CPU ticks of `pids`, of the bench itself, of the services, and of the whole machine. PostgreSQL
 * counts its shared processes (WAL writer, checkpointer, ...) and the backends of `databases`
 * only: other sessions' backends on a shared machine land in "other".
 */
export function sampleCpu(pids: readonly number[], databases: readonly string[]): CpuSample {
  const byPid = new Map<number, number>();
  for (const pid of [...pids, process.pid]) byPid.set(pid, cpuTicks(pid) ?? 0);
  const byService = new Map<string, number>([
    ['postgres', 0],
    ['redis', 0],
  ]);
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const command = readProc(entry, 'comm')?.trim();
    let service: string | undefined;
    if (command === 'redis-server') service = 'redis';
    else if (command === 'postgres') {
      // A backend's title is "postgres: USER DATABASE HOST(PORT) STATE"; shared processes name no host.
      const title = readProc(entry, 'cmdline')?.replaceAll('\0', ' ') ?? '';
      const backend = /\(\d+\)|\[local\]/.test(title);
      if (!backend || databases.some((database) => title.includes(` ${database} `)))
        service = 'postgres';
    }
    if (service === undefined) continue;
    byService.set(service, (byService.get(service) ?? 0) + (cpuTicks(Number(entry)) ?? 0));
  }
  const cpuLine = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = cpuLine.trim().split(/\s+/).map(Number);
  const machineBusy = [user, nice, system, irq, softirq, steal].reduce<number>(
    (sum, value) => sum + (value ?? 0),
    0,
  );
  return { at: performance.now(), byPid, byService, machineBusy };
}

/** Percent of one core used between two samples. */
export function cpuPercent(
  ticksBefore: number,
  ticksAfter: number,
  from: CpuSample,
  to: CpuSample,
): number {
  const seconds = (to.at - from.at) / 1000;
  if (seconds <= 0) return 0;
  return round1(((ticksAfter - ticksBefore) / CLOCK_TICKS_PER_S / seconds) * 100);
}

export interface CpuUsage {
  /** Percent of one core, summed over the given pids. */
  pids: number;
  postgres: number;
  redis: number;
  bench: number;
  /** Everything else busy on the machine meanwhile (the kernel, other sessions' processes). */
  other: number;
  /** Every core's busy time, percent of one core (2 cores: at most 200). */
  machine: number;
}

export function cpuUsage(pids: readonly number[], from: CpuSample, to: CpuSample): CpuUsage {
  const sum = (sample: CpuSample) =>
    pids.reduce((total, pid) => total + (sample.byPid.get(pid) ?? 0), 0);
  const service = (name: string) =>
    cpuPercent(from.byService.get(name) ?? 0, to.byService.get(name) ?? 0, from, to);
  const self = process.pid;
  const usage = {
    pids: cpuPercent(sum(from), sum(to), from, to),
    postgres: service('postgres'),
    redis: service('redis'),
    bench: cpuPercent(from.byPid.get(self) ?? 0, to.byPid.get(self) ?? 0, from, to),
    machine: cpuPercent(from.machineBusy, to.machineBusy, from, to),
  };
  const other = usage.machine - usage.pids - usage.postgres - usage.redis - usage.bench;
  return { ...usage, other: round1(Math.max(0, other)) };
}

export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Deletes every key under `${prefix}:` (a bench's own prefix: never another's, never FLUSHDB). */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
