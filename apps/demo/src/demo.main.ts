import path from 'node:path';
import type { QueueModeOption } from '@matchplane/contracts';
import { PlayerClient } from '@matchplane/sdk/node';
import {
  BACKFILL_MODE,
  DEMO_USAGE,
  parseDemoArgs,
  READY_CHECK_TIMEOUT_MS,
  type DemoArgs,
} from './demo.args';
import { CityNetwork } from './city-network';
import { DemoFailure, describeError, within } from './failure';
import { DEMO_REGIONS, locationFor } from './locations';
import { MatchBoard } from './match-board';
import { SimulatedPlayer, type PlayerOutcome } from './simulated-player';
import { DemoStack, REPO_ROOT, type ChildExit } from './stack';
import { short, Timeline } from './timeline';

/*
 * `npm run demo`: the whole control plane as child processes, then a handful of simulated players
 * through complete matches with the SDK, as a readable timeline. See DEMO_USAGE.
 */

const HEARTBEAT_INTERVAL_MS = 2_000;
/** Players start one after another, so the queue order is visible. */
const PLAYER_STAGGER_MS = 300;
const TAIL_LINES = 40;

const timeline = new Timeline();
let stack: DemoStack | undefined;
let cityNetwork: CityNetwork | undefined;
const players: SimulatedPlayer[] = [];
/** Set once the demo is ending (failure, success or signal): nothing else may start a shutdown. */
let ending = false;

async function main(args: DemoArgs): Promise<number | undefined> {
  timeline.note(
    'demo',
    `Matchplane demo: ${args.players} simulated players (--players), games of ${args.durationMs} ms`,
  );
  const demoStack = new DemoStack(
    {
      databaseName: args.database,
      redisPrefix: args.redisPrefix,
      keysFile: path.join(REPO_ROOT, '.dev/demo/join-keys.json'),
      probeKeysFile: path.join(REPO_ROOT, '.dev/demo/probe-keys.json'),
      regions: DEMO_REGIONS,
      logDir: path.join(REPO_ROOT, '.dev/demo/logs'),
      gameServerEnv: {
        MATCH_DURATION_MS: String(args.durationMs),
        MATCH_TICK_INTERVAL_MS: '500',
        CONNECT_DEADLINE_MS: args.backfill ? '5000' : '8000',
      },
      serviceEnv: {
        ...(args.backfill ? { QUEUE_MODES: `duel:1x2,${BACKFILL_MODE.spec},squad:4x2` } : {}),
        ...(args.readyCheck ? { QUEUE_ACCEPTANCE_TIMEOUTS: `*=${READY_CHECK_TIMEOUT_MS}` } : {}),
      },
      heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
      echoLogs: args.logs,
    },
    timeline,
  );
  stack = demoStack;

  let failWith: (failure: DemoFailure) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (failWith = reject));
  failed.catch(() => undefined);
  demoStack.onUnexpectedExit((failure) => failWith(failure));

  const run = async (): Promise<PlayerOutcome[]> => {
    await demoStack.prepare();
    await demoStack.start();

    // The queue policy as any client reads it (a throwaway guest session).
    const lobby = new PlayerClient({ baseUrl: demoStack.apiUrl });
    await lobby.createSession();
    const options = await lobby.queueOptions();
    await lobby.endSession();
    timeline.note(
      'demo',
      `queue options: modes ${options.modes.map(describeMode).join(', ')}; regions ${options.regions.join(', ')}; heartbeat every ${options.heartbeatIntervalMs} ms`,
    );
    const mode =
      options.modes.find((m) => m.mode === args.mode) ??
      (args.mode === undefined
        ? (options.modes.find((m) => m.mode === 'duel') ?? options.modes[0])
        : undefined);
    if (!mode)
      throw new DemoFailure(
        `mode ${args.mode ?? '(none)'} is not offered (${options.modes.map((m) => m.mode).join(', ')})`,
      );
    const matchSize = mode.teamSizes.reduce((total, size) => total + size, 0);
    if (args.players % matchSize !== 0)
      throw new DemoFailure(
        `--players ${args.players} does not fill ${mode.mode} matches of ${matchSize} players: use a multiple of ${matchSize}`,
      );
    timeline.note(
      'demo',
      `playing ${mode.mode}: ${args.players / matchSize} match(es) of ${matchSize}; players live in simulated cities`,
    );
    const locations = Array.from({ length: args.players }, (_, i) =>
      locationFor(i, args.players, matchSize),
    );
    cityNetwork = await CityNetwork.start(demoStack.edgeUrls, locations);
    timeline.note(
      'demo',
      `each city reaches each region's probe edge through a loopback proxy adding its RTT (${cityNetwork.size} proxies); players answer challenges at once, the edges measure`,
    );
    const network = cityNetwork;

    const board = new MatchBoard(timeline, mode.mode, matchSize);
    const newPlayer = (i: number, role?: 'no-show' | 'late' | 'drops'): SimulatedPlayer => {
      // A late player lives where the no-show did, so the match's region suits it too.
      const location = locationFor(role === 'late' ? i - 1 : i, args.players, matchSize);
      return new SimulatedPlayer(
        {
          label: `P${i + 1} ${location.city}`,
          location,
          edgeRoutes: network.routesFor(location),
          apiUrl: demoStack.apiUrl,
          mode: mode.mode,
          options,
          samples: 3,
          matchTimeoutMs: 60_000,
          matchDurationMs: args.durationMs,
          readyCheck: args.readyCheck,
          ...(role ? { role } : {}),
        },
        timeline,
        board,
      );
    };
    const roleOf = (i: number): 'no-show' | 'drops' | undefined =>
      args.backfill && i === args.players - 1
        ? 'no-show'
        : args.reconnect && i === 0
          ? 'drops'
          : undefined;
    for (let i = 0; i < args.players; i += 1) players.push(newPlayer(i, roleOf(i)));
    const late = args.backfill
      ? backfillLate(demoStack, board, players.at(-1)!, newPlayer(args.players, 'late'))
      : [];
    const outcomes = await Promise.all([
      ...players.map(async (player, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * PLAYER_STAGGER_MS));
        return player.play();
      }),
      ...late,
    ]);

    // Every game server said COMPLETED; the control plane's last word, notified, agrees?
    for (const matchId of board.ids()) {
      const state = board.stateOf(matchId);
      if (state !== 'COMPLETED')
        throw new DemoFailure(
          `match ${short(matchId)} was last notified ${state ?? '(never)'}, not COMPLETED`,
          'dispatcher',
        );
    }
    timeline.note(
      'demo',
      `${board.size === 1 ? 'the match' : `all ${board.size} matches`} COMPLETED:`,
    );
    for (const line of board.summary()) timeline.note('demo', `  ${line}`);
    return outcomes;
  };

  await within(Promise.race([run(), failed]), args.timeoutMs, 'the whole demo (--timeout)');
  if (ending) return undefined;
  ending = true;
  const exits = await shutDown();
  const unclean = exits.filter((exit) => exit.killed);
  if (unclean.length > 0) {
    timeline.note(
      'demo',
      `stopped, but ${unclean.map((exit) => exit.app).join(', ')} had to be killed`,
    );
    return 1;
  }
  timeline.note('demo', 'done');
  return 0;
}

/**
 * The backfill scenario: once the no-show's match is IN_PROGRESS short-handed, `late` queues and
 * the game server backfills it. The game server's backfill steps (its log lines, from the
 * allocator's output) join the timeline.
 */
function backfillLate(
  demoStack: DemoStack,
  board: MatchBoard,
  noShow: SimulatedPlayer,
  late: SimulatedPlayer,
): Promise<PlayerOutcome>[] {
  demoStack.watch('allocator', (line) => {
    const step = gameServerBackfillStep(line);
    if (step !== undefined) timeline.note('game server', step);
  });
  const played = (async () => {
    const matchId = await noShow.matchId;
    await within(
      board.untilState(matchId, 'IN_PROGRESS'),
      60_000,
      `match ${short(matchId)} to be IN_PROGRESS`,
      'allocator',
    );
    timeline.note(
      'demo',
      `match ${short(matchId)} is IN_PROGRESS one player short; a late player queues now`,
    );
    players.push(late);
    return late.play();
  })();
  return [played];
}

/** A game server's log line about a backfill (pretty format), as the timeline shows it. */
function gameServerBackfillStep(line: string): string | undefined {
  const parsed = /^\[[^\]]+\] \w+ \(game-server\): (.*) \{"context":"(\w+)"\}$/.exec(line);
  if (!parsed) return undefined;
  const [, message = '', context] = parsed;
  if (context !== 'BackfillRunner' && !/backfill/i.test(message)) return undefined;
  // Ids as short as the rest of the timeline shows them (a player's is its guest id).
  return message.replace(
    /\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
    '$1',
  );
}

/** Ends the players, stops the stack (SIGTERM) and reports how each app ended. */
async function shutDown(): Promise<ChildExit[]> {
  for (const player of players) player.close();
  cityNetwork?.stop();
  if (!stack || stack.started === 0) return [];
  timeline.note('stack', 'stopping every app (SIGTERM)');
  const exits = await stack.stop();
  timeline.note(
    'stack',
    `stopped: ${exits.map((exit) => `${exit.app} ${exit.killed ? `KILLED after the grace period (${exit.status})` : exit.status}`).join(', ')}`,
  );
  return exits;
}

async function fail(error: unknown): Promise<number | undefined> {
  if (ending) return undefined;
  ending = true;
  timeline.note('demo', `FAILED: ${describeError(error)}`);
  const suspect = error instanceof DemoFailure ? error.suspect : undefined;
  if (stack && suspect) {
    timeline.raw(
      `--- last ${TAIL_LINES} lines of ${suspect} (all of it: ${stack.logFile(suspect)}) ---`,
    );
    for (const line of stack.tail(suspect, TAIL_LINES)) timeline.raw(`  ${line}`);
    timeline.raw(`--- end of ${suspect} ---`);
  } else if (stack) {
    timeline.raw(`(each app's output is in ${path.dirname(stack.logFile('api'))})`);
  }
  await shutDown().catch(() => undefined);
  return 1;
}

function describeMode(mode: QueueModeOption): string {
  const equal = mode.teamSizes.every((size) => size === mode.teamSize);
  return `${mode.mode} (${equal ? `${mode.teamSize}x${mode.teamCount}` : mode.teamSizes.join('+')})`;
}

function onSignal(signal: NodeJS.Signals): void {
  if (ending) {
    // A second Ctrl-C: do not wait for anyone.
    timeline.note('demo', `${signal} again: killing every app`);
    stack?.killAll();
    process.exit(130);
  }
  ending = true;
  timeline.note('demo', `${signal}: stopping`);
  void shutDown()
    .catch(() => undefined)
    .finally(() => process.exit(130));
}

const parsed = parseDemoArgs(process.argv.slice(2));
if (!parsed.ok) {
  if (parsed.problem) process.stderr.write(`demo: ${parsed.problem}\n${DEMO_USAGE}\n`);
  else process.stdout.write(`${DEMO_USAGE}\n`);
  process.exit(parsed.problem ? 2 : 0);
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.once('exit', () => {
  cityNetwork?.stop();
  stack?.killAll();
});
main(parsed.args)
  .catch(fail)
  .then(
    // undefined: a signal is ending the demo, and its handler exits.
    (code) => code !== undefined && process.exit(code),
    () => process.exit(1),
  );
