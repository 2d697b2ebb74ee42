import { parseArgs } from 'node:util';

/** Every fault the default topology can inject, in the order of a full run. */
export const ALL_FAULTS = [
  'api#0',
  'dispatcher#0',
  'matcher#0',
  'allocator#0',
  'maintenance#0',
  'redis',
  'api#1',
  'dispatcher#1',
  'postgres',
  'game-server',
] as const;
/**
 * The HA topology's: its second matcher, and the Redis master and PostgreSQL primary lost for
 * good (the replica and the standby promoted) instead of a crash and restart of the one server.
 */
export const HA_FAULTS = [
  'api#0',
  'dispatcher#0',
  'matcher#0',
  'allocator#0',
  'maintenance#0',
  'redis-master',
  'api#1',
  'dispatcher#1',
  'matcher#1',
  'postgres-primary',
  'game-server',
] as const;
export type Fault = (typeof ALL_FAULTS)[number] | (typeof HA_FAULTS)[number];

export const TOPOLOGIES = ['default', 'ha'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

export interface ChaosArgs {
  /** `default`: one PostgreSQL, one Redis; `ha`: Sentinel group, primary + standby (ha-topology.ts). */
  topology: Topology;
  /** Seconds of load, faults included (the drain afterwards is extra). */
  durationS: number;
  /** Simulated players playing journeys back to back. */
  players: number;
  faults: Fault[];
  /** How long a killed process stays down before it is started again (ms). */
  downMs: number;
  /** Where the result JSON is written (also printed last on stdout). */
  out: string | undefined;
  /** Keep the scratch directory (logs, the clusters' files) after the run. */
  keep: boolean;
}

export const CHAOS_USAGE = `usage: npm run chaos -- [options]

Starts its own PostgreSQL cluster and Redis server (temporary directory, ports from 55432 and
56379), the whole stack on them (two API replicas, two dispatchers, matcher, allocator with the
local provider, maintenance), drives simulated players through full journeys with the SDK and,
during the run, SIGKILLs and restarts each app in turn, restarts Redis and PostgreSQL, and
SIGKILLs the game server of a match in progress. Prints a line per fault and one JSON line last;
exit 0 when the targets hold (0 lost, 0 stranded, 0 order violations, 0 duplicates handed to the
application, longest stall <= 5 s per fault; with game-server: every player of the killed match
queues again within SERVER_HEARTBEAT_TIMEOUT_MS + 2 s).

--topology=ha runs instead a Redis master, its replica and three sentinels, a PostgreSQL primary
with a synchronous streaming standby (the apps reach them through REDIS_SENTINELS and a DATABASE_URL listing
both hosts with target_session_attrs=read-write), two matchers sharing duel's two region-group
shards, two APIs and two dispatchers; its faults add the Redis master SIGKILLed (Sentinel promotes
the replica) and the PostgreSQL primary crashed for good (the run promotes the standby, as an
operator would). Its stall targets: <= 15 s for postgres-primary, <= 2 s for every other fault.

  --topology=<name>  default or ha (default: default)
  --duration=<s>     seconds of load, faults included (default 180)
  --players=<n>      simulated players, each playing journeys back to back (default 12)
  --faults=<list>    comma-separated faults in order, or a number: the first n of the full list
                     (default all: ${ALL_FAULTS.join(',')};
                     with --topology=ha: ${HA_FAULTS.join(',')})
  --down=<ms>        how long a killed process stays down (default 2000); for postgres-primary,
                     how long after the crash the standby is promoted
  --out=<file>       also write the result JSON there
  --keep             keep the scratch directory (logs, cluster files)
  -h, --help         this text`;

export type ParsedChaosArgs = { ok: true; args: ChaosArgs } | { ok: false; problem?: string };

export function parseChaosArgs(argv: readonly string[]): ParsedChaosArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        topology: { type: 'string' },
        duration: { type: 'string' },
        players: { type: 'string' },
        faults: { type: 'string' },
        down: { type: 'string' },
        out: { type: 'string' },
        keep: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  if (values.help) return { ok: false };
  const integer = (
    name: string,
    raw: string | undefined,
    fallback: number,
    min: number,
    max: number,
  ) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new Error(`--${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return value;
  };
  try {
    const topology = TOPOLOGIES.find((known) => known === (values.topology ?? 'default'));
    if (!topology)
      throw new Error(
        `--topology: unknown topology "${values.topology}" (known: ${TOPOLOGIES.join(', ')})`,
      );
    const known: readonly Fault[] = topology === 'ha' ? HA_FAULTS : ALL_FAULTS;
    const durationS = integer('duration', values.duration, 180, 10, 86_400);
    const players = integer('players', values.players, 12, 2, 1_000);
    const downMs = integer('down', values.down, 2_000, 0, 60_000);
    let faults: Fault[] = [...known];
    if (values.faults !== undefined) {
      if (/^\d+$/.test(values.faults)) {
        faults = known.slice(0, integer('faults', values.faults, 0, 0, known.length));
      } else {
        faults = values.faults.split(',').map((name) => {
          const fault = known.find((candidate) => candidate === name.trim());
          if (!fault)
            throw new Error(
              `--faults: unknown fault "${name}" for the ${topology} topology (known: ${known.join(', ')})`,
            );
          return fault;
        });
      }
    }
    if (players % 2 !== 0) throw new Error('--players must be even (duel matches of 2)');
    return {
      ok: true,
      args: { topology, durationS, players, faults, downMs, out: values.out, keep: !!values.keep },
    };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}
