/**
 * `npm run simulate`: replays queue traffic in virtual time through the real matching function,
 * under the active rule set (the active version stored in PostgreSQL over the matcher's
 * environment) and, with --proposed, a proposed one, and prints what players would go through
 * under each. docs/SIMULATOR.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { formMatches } from '@matchplane/domain';
import { replay, type ModeOutcome } from './simulation/replay';
import { activeRuleSet } from './simulation/active-version';
import { ruleSetFromFile } from './simulation/rule-sets';
import { captureLine, parseCapture, syntheticTraffic, type Arrival } from './simulation/traffic';

const USAGE = `usage: npm run simulate -- [options]
  --players N            synthetic players over the traffic (default 10000)
  --seconds N            synthetic traffic's length, virtual seconds (default 3600)
  --seed N               synthetic traffic's seed (default 20261207)
  --capture FILE         replay this capture (JSON lines, docs/SIMULATOR.md) instead
  --write-capture FILE   write the traffic replayed as a capture
  --proposed FILE        also replay under this rule set (JSON object of rule variables)
  --pass-interval-ms N   virtual time between passes (default: MATCHER_PASS_INTERVAL_MS)
  --drain-seconds N      passes after the last arrival (default 300)
  --database-url URL     read the active rule set version here (default: the apps' DATABASE_*)
The active rule set is the matcher's: the active version stored in PostgreSQL laid over
QUEUE_MODES, MATCH_WIDENING, MATCH_WIDENING_BY_MODE and QUEUE_MODE_ATTRIBUTES from the
environment, or the environment alone when no version is active or PostgreSQL is unreachable
(the output's active_rule_set_version says which). The last stdout line is one JSON object.`;

interface Options {
  players: number;
  seconds: number;
  seed: number;
  capture?: string;
  writeCapture?: string;
  proposed?: string;
  passIntervalMs?: number;
  drainSeconds: number;
  databaseUrl?: string;
}

function integer(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`--${name} must be an integer >= ${min} (got ${JSON.stringify(raw)})`);
  }
  return value;
}

export function simulateOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      players: { type: 'string' },
      seconds: { type: 'string' },
      seed: { type: 'string' },
      capture: { type: 'string' },
      'write-capture': { type: 'string' },
      proposed: { type: 'string' },
      'pass-interval-ms': { type: 'string' },
      'drain-seconds': { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  return {
    players: integer('players', values.players, 10_000, 1),
    seconds: integer('seconds', values.seconds, 3_600, 1),
    seed: integer('seed', values.seed, 20261207, 0),
    capture: values.capture,
    writeCapture: values['write-capture'],
    proposed: values.proposed,
    passIntervalMs:
      values['pass-interval-ms'] === undefined
        ? undefined
        : integer('pass-interval-ms', values['pass-interval-ms'], 500, 1),
    drainSeconds: integer('drain-seconds', values['drain-seconds'], 300, 0),
    databaseUrl: values['database-url'],
  };
}

const progress = (line: string) => process.stderr.write(`[simulate] ${line}\n`);

async function main(): Promise<void> {
  const started = performance.now();
  const options = simulateOptions(process.argv.slice(2));
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const env =
    options.databaseUrl === undefined
      ? process.env
      : { ...process.env, DATABASE_URL: options.databaseUrl };
  const active = await activeRuleSet(env, progress);
  progress(
    `active rule set: ${active.version === 'environment' ? 'the environment' : `version ${active.version}`}`,
  );
  // Over the environment, as a version is stored and laid: what activating the file would run.
  const proposed = options.proposed ? ruleSetFromFile(options.proposed, env) : undefined;
  const passIntervalMs =
    options.passIntervalMs ?? Number(process.env.MATCHER_PASS_INTERVAL_MS ?? 500);
  const arrivals: Arrival[] = options.capture
    ? parseCapture(readFileSync(options.capture, 'utf8'))
    : syntheticTraffic({ ...options, rules: active.rules, attributes: active.attributes });
  if (options.writeCapture) {
    writeFileSync(options.writeCapture, arrivals.map(captureLine).join('\n') + '\n');
  }
  const simulatedMs = (arrivals.at(-1)?.atMs ?? 0) + options.drainSeconds * 1000;
  const replayOptions = {
    passIntervalMs,
    drainMs: options.drainSeconds * 1000,
    startAt: new Date('2026-01-01T00:00:00.000Z'),
  };
  const ruleSets: Record<string, Record<string, ModeOutcome>> = {};
  for (const [name, ruleSet] of Object.entries({ active, ...(proposed ? { proposed } : {}) })) {
    progress(`replaying ${arrivals.length} arrivals under the ${name} rule set`);
    ruleSets[name] = replay(arrivals, ruleSet.rules, formMatches, replayOptions);
    for (const [mode, outcome] of Object.entries(ruleSets[name])) {
      progress(
        `${name} ${mode}: ${outcome.matched_players}/${outcome.players} matched, wait p50 ` +
          `${outcome.wait_ms.p50} p95 ${outcome.wait_ms.p95} p99 ${outcome.wait_ms.p99} ms, worst RTT mean ` +
          `${outcome.worst_rtt_ms.mean} ms, team rating gap ${outcome.mean_team_rating_gap}`,
      );
    }
  }
  const result = {
    simulator: 'matchplane',
    traffic: options.capture
      ? { capture: options.capture }
      : { synthetic: { players: options.players, seconds: options.seconds, seed: options.seed } },
    arrivals: arrivals.length,
    active_rule_set_version: active.version,
    pass_interval_ms: passIntervalMs,
    simulated_s: Math.round(simulatedMs / 1000),
    rule_sets: ruleSets,
    // Wall-clock: the one figure that differs between two runs of the same input.
    wall_s: Math.round((performance.now() - started) / 100) / 10,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`simulate: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  });
}
