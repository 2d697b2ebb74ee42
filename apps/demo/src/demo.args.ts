import { parseArgs } from 'node:util';

export interface DemoArgs {
  players: number;
  /** Undefined: duel if offered, else the first mode of GET /v1/queue/options. */
  mode: string | undefined;
  /** Length of each game (the game server's MATCH_DURATION_MS). */
  durationMs: number;
  /** Overall limit of the demo, stack start-up included. */
  timeoutMs: number;
  database: string;
  redisPrefix: string;
  logs: boolean;
  /** The backfill scenario (--backfill). */
  backfill: boolean;
  /** Every player must accept its match before a server is asked for (--ready-check). */
  readyCheck: boolean;
  /** P1 drops its game connection mid-game and rejoins (--reconnect). */
  reconnect: boolean;
}

export const DEMO_USAGE = `usage: npm run demo -- [options]

Starts the whole Matchplane stack (own database and Redis prefix, free ports), plays simulated
players through matches with the SDK and prints a timeline. Exit 0 once every match COMPLETED.

  --players <n>        simulated players (default 4; a multiple of the mode's match size)
  --mode <mode>        queue mode (default duel, else the first one the API offers)
  --duration <ms>      length of each game on the game server (default 3000)
  --timeout <s>        give up after this long (default 180)
  --database <name>    database, recreated every run; must contain "demo" (default matchplane_demo)
  --redis-prefix <p>   Redis key prefix, cleared every run; must contain "demo" (default mpdemo)
  --backfill           one 2v2 (mode pair) where one player never connects: the match plays on
                       short-handed, a late player queues and the game server backfills it
                       (sets --players 4 and --mode pair; --duration at least 15000)
  --ready-check        the mode asks every player to accept its match before a game server is
                       allocated (QUEUE_ACCEPTANCE_TIMEOUTS); each player accepts when notified
  --reconnect          P1 loses its game connection a third of the way into its game; the
                       SDK (MatchPlay) fetches its assignment again and rejoins, same team
  --logs               also echo every app's output to stderr
  -h, --help           this text`;

/** How long the demo's ready check waits for every player (QUEUE_ACCEPTANCE_TIMEOUTS). */
export const READY_CHECK_TIMEOUT_MS = 15_000;

/** The backfill scenario's mode, which the stack offers beside the default ones (QUEUE_MODES). */
export const BACKFILL_MODE = { mode: 'pair', spec: 'pair:2x2' } as const;
const BACKFILL_MIN_DURATION_MS = 15_000;

export type ParsedDemoArgs = { ok: true; args: DemoArgs } | { ok: false; problem?: string };

/** `{ok: false}` without a problem means --help. */
export function parseDemoArgs(argv: readonly string[]): ParsedDemoArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        players: { type: 'string' },
        mode: { type: 'string' },
        duration: { type: 'string' },
        timeout: { type: 'string' },
        database: { type: 'string' },
        'redis-prefix': { type: 'string' },
        logs: { type: 'boolean' },
        backfill: { type: 'boolean' },
        'ready-check': { type: 'boolean' },
        reconnect: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  if (values.help) return { ok: false };
  const backfill = values.backfill ?? false;
  if (backfill && (values.players !== undefined || values.mode !== undefined))
    return { ok: false, problem: '--backfill sets --players and --mode itself' };
  const players = integer(values.players, 4);
  if (players === undefined || players < 2 || players > 64)
    return { ok: false, problem: '--players must be an integer from 2 to 64' };
  const durationMs = integer(values.duration, backfill ? BACKFILL_MIN_DURATION_MS : 3_000);
  if (durationMs === undefined || durationMs < 500 || durationMs > 120_000)
    return { ok: false, problem: '--duration must be an integer from 500 to 120000 (ms)' };
  if (backfill && durationMs < BACKFILL_MIN_DURATION_MS)
    return {
      ok: false,
      problem: `--backfill needs --duration of at least ${BACKFILL_MIN_DURATION_MS} (ms): the backfill happens during the game`,
    };
  const timeoutSeconds = integer(values.timeout, 180);
  if (timeoutSeconds === undefined || timeoutSeconds < 10)
    return { ok: false, problem: '--timeout must be an integer of at least 10 (s)' };
  return {
    ok: true,
    args: {
      players,
      mode: backfill ? BACKFILL_MODE.mode : values.mode,
      durationMs,
      timeoutMs: timeoutSeconds * 1000,
      database: values.database ?? 'matchplane_demo',
      redisPrefix: values['redis-prefix'] ?? 'mpdemo',
      logs: values.logs ?? false,
      backfill,
      readyCheck: values['ready-check'] ?? false,
      reconnect: values.reconnect ?? false,
    },
  };
}

function integer(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  return /^\d+$/.test(value) ? Number(value) : undefined;
}
