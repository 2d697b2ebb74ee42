import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { CHAOS_USAGE, parseChaosArgs, type ChaosArgs, type Fault } from './chaos.args';
import { commitGaps, deliveryFigures, leftovers, stranded, type FaultWindow } from './chaos-report';
import { ChaosStack } from './chaos-stack';
import { DefaultTopology, type ChaosTopology } from './chaos-topology';
import { HaTopology } from './ha-topology';
import { JourneyLoad } from './journey-load';
import { REPO_ROOT, sleep } from '../bench/bench.processes';
import { makeScratch, removeScratch } from './private-services';
import { killLiveGameServer, serverLossFigures, type ServerKill } from './server-loss';

/*
 * `npm run chaos`: the whole stack on a private PostgreSQL and Redis (or, --topology=ha, a
 * Sentinel group and a primary with its standby: ha-topology.ts), simulated players through
 * full journeys, and each app SIGKILLed and restarted in turn, Redis and PostgreSQL crashed and
 * restarted, while they play. One progress line per fault on stderr; one JSON line last on
 * stdout. See CHAOS_USAGE.
 */

const DATABASE = 'matchplane_chaos';
/** A journey step waits this long before the journey is given up (and counted abandoned). */
const STEP_TIMEOUT_MS = 20_000;
const GAME_MS = 3_000;
/**
 * How long a player waits for its match's server: past the reconciler's allocating deadline
 * (60 s), so a match whose server never comes is seen FAILED rather than given up on.
 */
const SERVER_TIMEOUT_MS = 75_000;
/** After the load: how long the journeys under way may take to end. */
const DRAIN_TIMEOUT_MS = 150_000;
/** Then: how long the reconciler may take to end what is left (its deadlines are below). */
const SETTLE_TIMEOUT_MS = 60_000;
/** A match or ticket that did not change for this long at the end is stranded. */
const STRANDED_WATCH_MS = 5_000;
/** How long a silent game server's match stays live (the apps' SERVER_HEARTBEAT_TIMEOUT_MS). */
const SERVER_HEARTBEAT_TIMEOUT_MS = 10_000;
/** Target: every player of a match whose server died queues again within this (ms). */
const PLAYERS_FREE_TARGET_MS = SERVER_HEARTBEAT_TIMEOUT_MS + 2_000;
/** How long the game-server fault waits for a match to be playing. */
const FIND_LIVE_MATCH_MS = 30_000;

/** Timings scaled down so a fault's consequences play out within a short run. */
const APP_ENV: Record<string, string> = {
  TICKET_HEARTBEAT_INTERVAL_MS: '2000',
  TICKET_HEARTBEAT_TIMEOUT_MS: '10000',
  // Every simulated player comes from 127.0.0.1: per-address limits would count them as one.
  API_RATE_LIMIT_SESSIONS_PER_ADDRESS: '0',
  API_RATE_LIMIT_REQUESTS_PER_ADDRESS: '0',
  RECONCILE_INTERVAL_MS: '1000',
  // RECONCILE_ALLOCATING_TIMEOUT_MS stays at its default (60 s): a game server is a Nest process
  // whose start took 7-14 s on the shared 2-core machine, and over 20 s at its busiest.
  RECONCILE_CONNECT_DEADLINE_MS: '20000',
  RECONCILE_MAX_MATCH_DURATION_MS: '60000',
  SERVER_HEARTBEAT_TIMEOUT_MS: String(SERVER_HEARTBEAT_TIMEOUT_MS),
};
const GAME_SERVER_ENV: Record<string, string> = {
  MATCH_DURATION_MS: String(GAME_MS),
  MATCH_TICK_INTERVAL_MS: '500',
  CONNECT_DEADLINE_MS: '8000',
  SERVER_HEARTBEAT_TIMEOUT_MS: String(SERVER_HEARTBEAT_TIMEOUT_MS),
};

let servers: ChaosTopology | undefined;
let stack: ChaosStack | undefined;
let load: JourneyLoad | undefined;
let scratch: string | undefined;
let keepScratch = false;

function progress(line: string): void {
  process.stderr.write(`chaos: ${line}\n`);
}

function loadavg(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').trim();
  } catch {
    return 'unavailable';
  }
}

async function query(port: number): Promise<Client> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: DATABASE });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Restarts any app that died without being killed by the run (and remembers it did). */
function superviseStack(target: ChaosStack, faulting: Set<string>): NodeJS.Timeout {
  return setInterval(() => {
    for (const instance of target.instances) {
      if (instance.alive || faulting.has(instance.name)) continue;
      progress(`${instance.name} is down without a fault: starting it again`);
      instance.start();
    }
  }, 1_000);
}

/** The game servers the run killed (a game server is not restarted: its match is lost). */
const serverKills: ServerKill[] = [];

/** Kills one thing, keeps it down for `downMs`, starts it again; ms until the stack is healthy. */
async function inject(fault: Fault, args: ChaosArgs, faulting: Set<string>): Promise<number> {
  const started = Date.now();
  const everyoneHealthy = () =>
    Promise.all(stack!.instances.map((instance) => instance.waitHealthy()));
  if (fault === 'game-server') {
    const db = await query(servers!.databasePort());
    try {
      const kill = await killLiveGameServer(db, FIND_LIVE_MATCH_MS);
      if (kill) serverKills.push(kill);
      else progress('game-server: no match was playing to kill');
    } finally {
      await db.end().catch(() => undefined);
    }
  } else if (await servers!.inject(fault, args.downMs, progress)) {
    // A server's fault, over (ChaosTopology.inject).
  } else {
    const instance = stack!.find(fault)!;
    faulting.add(instance.name);
    try {
      await instance.kill();
      await sleep(args.downMs);
      instance.start();
    } finally {
      faulting.delete(instance.name);
    }
  }
  await everyoneHealthy();
  return Date.now() - started;
}

async function main(args: ChaosArgs): Promise<number> {
  keepScratch = args.keep;
  const loadavgAtStart = loadavg();
  scratch = makeScratch();
  progress(`scratch directory ${scratch} (logs in logs/)`);
  servers =
    args.topology === 'ha'
      ? await HaTopology.create(scratch)
      : await DefaultTopology.create(scratch);
  progress(`${servers.name} topology: ${servers.describe()}`);
  stack = await ChaosStack.create({
    connectionEnv: servers.connectionEnv(DATABASE),
    matchers: servers.matchers,
    redisPrefix: 'chaos',
    workDir: scratch,
    env: { ...APP_ENV, ...servers.appEnv },
    gameServerEnv: GAME_SERVER_ENV,
  });
  await stack.prepare();
  await stack.startAll();
  progress(`stack healthy: ${stack.instances.map((i) => `${i.name} :${i.port}`).join(', ')}`);

  const faulting = new Set<string>();
  const supervisor = superviseStack(stack, faulting);
  load = new JourneyLoad({
    apiUrls: stack.apiUrls,
    players: args.players,
    mode: 'duel',
    stepTimeoutMs: STEP_TIMEOUT_MS,
    serverTimeoutMs: SERVER_TIMEOUT_MS,
    gameMs: GAME_MS,
  });
  const loadStarted = Date.now();
  load.start();
  const loadEnds = loadStarted + args.durationS * 1000;
  const warmupMs = Math.min(20_000, args.durationS * 150);
  const spacingMs =
    args.faults.length > 0 ? (args.durationS * 1000 - warmupMs) / args.faults.length : 0;
  const windows: { fault: string; at: number }[] = [];
  const recoveries: Record<string, number> = {};
  for (const [i, fault] of args.faults.entries()) {
    await sleep(loadStarted + warmupMs + i * spacingMs - Date.now());
    const at = Date.now();
    windows.push({ fault, at });
    const recoveredMs = await inject(fault, args, faulting);
    recoveries[fault] = recoveredMs;
    const counts = load.counts;
    progress(
      `fault ${i + 1}/${args.faults.length} at t+${((at - loadStarted) / 1000).toFixed(0)} s: ${fault} killed, down ${args.downMs} ms, every app healthy ${(recoveredMs / 1000).toFixed(1)} s after the kill; journeys ${counts.started} started, ${counts.finished} finished, ${counts.abandoned} abandoned`,
    );
  }
  await sleep(loadEnds - Date.now());
  const loadEnded = Date.now();
  progress(
    `load ends after ${((loadEnded - loadStarted) / 1000).toFixed(0)} s; waiting for the journeys under way`,
  );
  await Promise.race([load.finish(), sleep(DRAIN_TIMEOUT_MS)]);
  clearInterval(supervisor);

  const db = await query(servers.databasePort());
  try {
    const settleBy = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
      const left = await leftovers(db);
      if ((left.liveMatches === 0 && left.liveTickets === 0) || Date.now() > settleBy) break;
      await sleep(500);
    }
    const left = await stranded(db, STRANDED_WATCH_MS);
    const faultWindows: FaultWindow[] = windows.map((window, i) => ({
      ...window,
      until: windows[i + 1]?.at ?? loadEnded,
    }));
    const delivery = await deliveryFigures(
      db,
      load.feeds,
      faultWindows,
      windows[0]?.at ?? loadEnded,
    );
    const gaps = await commitGaps(db, faultWindows, loadStarted);
    const { rows: matchCounts } = await db.query<{ state: string; count: string }>(
      `SELECT state, count(*) AS count FROM matches GROUP BY state ORDER BY state`,
    );
    for (const stall of delivery.stallMsByFault)
      progress(
        `${stall.fault}: longest notification stall ${(stall.longestStallMs / 1000).toFixed(2)} s over ${stall.events} events, longest time without a commit ${((gaps.gapMsByFault[stall.fault] ?? 0) / 1000).toFixed(2)} s`,
      );
    for (const line of delivery.lostSample) progress(`lost: ${line}`);
    for (const line of left.sample) progress(`stranded: ${line}`);
    const serverLoss = args.faults.includes('game-server')
      ? await serverLossFigures(db, serverKills, load.requeuedAfterLoss)
      : undefined;
    if (serverLoss)
      progress(
        `game-server: ${serverLoss.matches} match(es) lost, players free again after ${JSON.stringify(serverLoss.players_free_ms)} ms, ${serverLoss.players_stranded} stranded, ended ${JSON.stringify(serverLoss.ended)}`,
      );
    const unexpectedExits = stack.unexpectedExits();
    for (const line of unexpectedExits) progress(`unexpected exit: ${line}`);

    const counts = load.counts;
    const longestStall = Object.fromEntries(
      delivery.stallMsByFault.map((s) => [s.fault, s.longestStallMs]),
    );
    const targetsMet =
      delivery.lost === 0 &&
      left.matches === 0 &&
      left.tickets === 0 &&
      delivery.orderViolations === 0 &&
      delivery.duplicates === 0 &&
      delivery.stallMsByFault.every(
        (stall) => stall.longestStallMs <= servers!.stallTargetMs(stall.fault),
      ) &&
      (!serverLoss ||
        (serverLoss.matches > 0 &&
          serverLoss.players_stranded === 0 &&
          serverLoss.players_free_ms.max <= PLAYERS_FREE_TARGET_MS));
    const result = {
      topology: args.topology,
      journeys_started: counts.started,
      journeys_finished: counts.finished,
      journeys_completed: counts.completed,
      journeys_ended_otherwise: counts.endedOtherwise,
      journeys_abandoned: counts.abandoned,
      abandon_reasons: counts.abandonReasons,
      lost_events: delivery.lost,
      stranded_matches: left.matches,
      stranded_tickets: left.tickets,
      duplicate_deliveries: delivery.duplicates,
      order_violations: delivery.orderViolations,
      longest_stall_ms_by_fault: longestStall,
      stall_target_ms_by_fault: Object.fromEntries(
        args.faults.map((fault) => [fault, servers!.stallTargetMs(fault)]),
      ),
      baseline_longest_stall_ms: delivery.baselineStallMs,
      longest_commit_gap_ms_by_fault: gaps.gapMsByFault,
      baseline_longest_commit_gap_ms: gaps.baselineGapMs,
      http_5xx: load.http.serverErrors,
      http_status_counts: Object.fromEntries([...load.http.byStatus].sort(([a], [b]) => a - b)),
      http_network_errors: load.http.networkErrors,
      events_expected: delivery.expected,
      events_delivered: delivery.delivered,
      events_resynced: delivery.resynced,
      outbox_by_status: delivery.outboxByStatus,
      matches_by_state: Object.fromEntries(
        matchCounts.map((row) => [row.state, Number(row.count)]),
      ),
      every_app_healthy_after_ms: recoveries,
      ...(serverLoss ? { server_loss: serverLoss } : {}),
      unexpected_exits: unexpectedExits,
      targets_met: targetsMet,
      conditions: {
        duration_s: args.durationS,
        players: args.players,
        faults: args.faults,
        down_ms: args.downMs,
        cpus: cpus().length,
        loadavg_start: loadavgAtStart,
        loadavg_end: loadavg(),
        node: process.version,
        finished_at: new Date().toISOString(),
      },
    };
    const line = JSON.stringify(result);
    if (args.out)
      writeFileSync(path.resolve(REPO_ROOT, args.out), `${JSON.stringify(result, null, 2)}\n`);
    await tearDown();
    process.stdout.write(`${line}\n`);
    return targetsMet ? 0 : 1;
  } finally {
    await db.end().catch(() => undefined);
  }
}

let tornDown = false;

async function tearDown(): Promise<void> {
  if (tornDown) return;
  tornDown = true;
  load?.close();
  await stack?.stopAll().catch(() => undefined);
  await servers?.destroy().catch(() => undefined);
  if (scratch && !keepScratch) removeScratch(scratch);
  else if (scratch) progress(`kept ${scratch}`);
}

/** Whatever happens, nothing the run started outlives it. */
function tearDownSync(): void {
  stack?.killAll();
  servers?.destroySync();
}

const parsed = parseChaosArgs(process.argv.slice(2));
if (!parsed.ok) {
  if (parsed.problem) process.stderr.write(`chaos: ${parsed.problem}\n${CHAOS_USAGE}\n`);
  else process.stdout.write(`${CHAOS_USAGE}\n`);
  process.exit(parsed.problem ? 2 : 0);
}
let signalled = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (signalled) {
      tearDownSync();
      process.exit(130);
    }
    signalled = true;
    progress(`${signal}: tearing down`);
    void tearDown().finally(() => process.exit(130));
  });
}
process.once('exit', tearDownSync);
main(parsed.args).then(
  (code) => process.exit(code),
  async (error: unknown) => {
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    keepScratch = true;
    await tearDown();
    process.exit(1);
  },
);
