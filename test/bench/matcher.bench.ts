/**
 * Matcher benchmark: the pure pass (formMatches over the whole pool, one core) and match quality
 * against a naive FIFO grouping, both from the pure bench, then the real commit path end to end:
 * the same pool written through the stores (PlayerStore, TicketStore) and projected into Redis,
 * and the matcher's own passes (MatcherLoop.passNow: projection read, validCandidate, formMatches,
 * lock + re-check, MatchStore, TicketStore, envelopes, post-commit re-projection) committing
 * everything the pool allows; then the cost curve (`--candidates-curve`) at several pool sizes.
 * Needs PostgreSQL and Redis on 127.0.0.1 and a build (`npm run bench:matcher`).
 * Progress goes to stderr; the last stdout line is one JSON object with every figure.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@matchplane/config';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { MigrateConfig } from '../../apps/migrate/src/migrate.config';
import { formMatches, type MatchCandidate, type ModeRules } from '@matchplane/domain';
import { allMigrations } from '@matchplane/migrations';
import { PlayerStoreModule, PlayerStore } from '@matchplane/players';
import { dataSourceOptions, Migrator, runInTransaction } from '@matchplane/persistence';
import { CandidateProjection, TicketStore } from '@matchplane/tickets';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule } from '../../apps/matcher/src/matcher.module';
import type { PassReport } from '../../apps/matcher/src/matching.pass';
import { parseFlags, usage, UsageError, writeResults, type FlagSpec } from './bench.cli';
import { bySize, candidatesCurve, DEFAULT_CANDIDATES_CURVE, notFalling } from './matcher-curve';
import { freePort, REPO_ROOT } from './bench.processes';
import {
  BENCH_MODE_ATTRIBUTES,
  BENCH_REGIONS,
  BENCH_RULES,
  benchPureMatcher,
  buildPool,
  DEFAULT_PARTY_SHARE,
  mean,
  mixedBuildMatches,
  percentile,
  pureCostCurve,
  round,
  splitParties,
} from './matcher-pure.bench';
import { benchRoleMode } from './matcher-roles';

const DATABASE = 'mp_bench_matcher';
const PREFIX = 'mp_bench_matcher';
const LOCALHOST = '127.0.0.1';
/** The pure bench's clock: the pool's enqueue times are relative to it. */
const BENCH_NOW = new Date('2026-12-01T10:00:00.000Z');

interface Options {
  candidates: number;
  /** Pool sizes of the cost curve, ascending; empty: no curve. */
  curve: number[];
  passes: number;
  seed: number;
  maxAgeSeconds: number;
  partyShare: number;
  commitBatch: number;
}

function progress(line: string): void {
  process.stderr.write(`[bench:matcher] ${line}\n`);
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2));

  // 1. The policy alone, on one core: the pure bench, as is.
  const pure = benchPureMatcher({
    candidates: options.candidates,
    passes: options.passes,
    seed: options.seed,
    maxAgeSeconds: options.maxAgeSeconds,
    partyShare: options.partyShare,
    log: (line) => progress(`pure: ${line}`),
  });

  // 1b. A min/max mode with roles, on a pool with block lists: the rules that must always hold.
  const roleMode = benchRoleMode({
    candidates: options.candidates,
    passes: options.passes,
    seed: options.seed,
    maxAgeMs: options.maxAgeSeconds * 1_000,
  });
  progress(
    `role mode ${roleMode.mode}: pass median ${roleMode.pass_ms.median} ms, ${roleMode.matches} matches ` +
      `(${roleMode.matches_below_full} below full), blocked pairs matched ${roleMode.blocked_pairs_matched}, ` +
      `role rule violations ${roleMode.role_rule_violations}`,
  );

  // 2. The real commit path on the same pool.
  const pool = buildPool(
    options.candidates,
    options.seed,
    options.maxAgeSeconds * 1_000,
    BENCH_NOW,
    options.partyShare,
  );
  const samePool =
    formMatches(pool, BENCH_RULES, BENCH_NOW).matches.length === pure.matcher.matches;
  const e2e = await endToEnd(pool, options);

  // 3. The cost curve: the pure pass, then the commit path, at each pool size.
  const curve = pureCostCurve(options.curve, {
    passes: options.passes,
    seed: options.seed,
    maxAgeSeconds: options.maxAgeSeconds,
    partyShare: options.partyShare,
    log: (line) => progress(`pure: ${line}`),
  });
  const committedBySize = new Map<number, EndToEnd>();
  for (const size of options.curve) {
    committedBySize.set(
      size,
      size === options.candidates
        ? e2e
        : await endToEnd(
            buildPool(
              size,
              options.seed,
              options.maxAgeSeconds * 1_000,
              BENCH_NOW,
              options.partyShare,
            ),
            options,
          ),
    );
  }
  const committedPerS = new Map(
    [...committedBySize].map(([size, run]) => [size, committedMatchesPerS(run)]),
  );
  const passAt100k = curve.pass_ms_by_candidates['100000'];

  const worst = e2e.committed.map((report) => report.worstRttMs);
  const e2eMean = round(mean(worst));
  const result = {
    bench: 'matcher',
    candidates: pure.candidates,
    regions: pure.regions,
    modes: pure.modes,
    seed: pure.seed,
    pass_ms: pure.pass_ms,
    per_mode_pass_ms: pure.per_mode_pass_ms,
    committed_matches_per_s: committedMatchesPerS(e2e),
    committed_players_per_s: round(e2e.players / (e2e.elapsedMs / 1_000)),
    matcher: {
      ...pure.matcher,
      committed_matches: e2e.committed.length,
      committed_players: e2e.players,
      committed_mean_worst_rtt_ms: e2eMean,
      committed_p95_worst_rtt_ms: round(percentile(worst, 0.95)),
    },
    fifo: pure.fifo,
    worst_rtt_reduction: pure.worst_rtt_reduction,
    matchable_upper_bound: pure.matchable_upper_bound,
    left_matchable: pure.left_matchable,
    // Committed matches (the real path) whose participants' build versions differ; target 0.
    mixed_build_matches: e2e.mixedBuildMatches,
    party_players: pure.party_players,
    parties: pure.parties,
    // Parties split or matched in part, by the pure pass and by the committed matches; target 0.
    parties_split: pure.parties_split + e2e.partiesSplit,
    mean_abs_team_rating_gap: pure.mean_abs_team_rating_gap,
    team_rating_gap_reduction: pure.team_rating_gap_reduction,
    role_mode: roleMode,
    blocked_pairs_matched: roleMode.blocked_pairs_matched,
    role_rule_violations: roleMode.role_rule_violations,
    pass_ms_by_candidates: curve.pass_ms_by_candidates,
    pass_growth: curve.pass_growth,
    committed_matches_per_s_by_candidates: bySize(committedPerS),
    e2e_by_candidates: bySize(
      new Map(
        [...committedBySize].map(([size, run]) => [
          size,
          {
            committed_matches: run.committed.length,
            committed_players: run.players,
            elapsed_ms: round(run.elapsedMs),
            passes: run.passes,
            first_pass_ms: run.firstPassMs,
            seed_ms: round(run.seedMs),
            left_matchable_after_commit: run.leftMatchable,
          },
        ]),
      ),
    ),
    e2e: {
      elapsed_ms: round(e2e.elapsedMs),
      seed_ms: round(e2e.seedMs),
      passes: e2e.passes,
      first_pass_ms: e2e.firstPassMs,
      dropped: e2e.dropped,
      proposed_not_committed: e2e.proposedNotCommitted,
      commit_batch: options.commitBatch,
      left_matchable_after_commit: e2e.leftMatchable,
      same_pool_as_pure_bench: samePool,
      pure_mixed_build_matches: pure.mixed_build_matches,
      pure_parties_split: pure.parties_split,
      committed_parties_split: e2e.partiesSplit,
    },
    node: process.version,
    timestamp: new Date().toISOString(),
    targets: {
      pass_ms_at_most_250: pure.pass_ms.median <= 250,
      mean_worst_rtt_at_least_30pct_below_fifo: pure.worst_rtt_reduction >= 0.3,
      everyone_matchable_matched: pure.left_matchable === 0 && e2e.leftMatchable === 0,
      no_mixed_build_matches: pure.mixed_build_matches === 0 && e2e.mixedBuildMatches === 0,
      no_parties_split: pure.parties_split === 0 && e2e.partiesSplit === 0,
      team_rating_gap_at_least_40pct_below_fifo: pure.team_rating_gap_reduction >= 0.4,
      no_blocked_pair_matched: roleMode.blocked_pairs_matched === 0,
      no_role_rule_violation: roleMode.role_rule_violations === 0,
      role_mode_pass_ms_at_most_250: roleMode.pass_ms.median <= 250,
      // null when the curve does not reach the size (or has one size only).
      pass_ms_at_100k_at_most_1000: passAt100k === undefined ? null : passAt100k <= 1_000,
      pass_growth_within_n_log_n: curve.pass_growth?.within_n_log_n ?? null,
      committed_matches_per_s_not_falling:
        committedPerS.size < 2 ? null : notFalling(committedPerS),
    },
  };
  process.stderr.write(
    `[bench:matcher] results written to ${writeResults(REPO_ROOT, 'test/bench/results/matcher.json', result)}\n`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

interface EndToEnd {
  committed: { worstRttMs: number }[];
  players: number;
  elapsedMs: number;
  /** Writing the pool through the stores (not part of elapsedMs). */
  seedMs: number;
  passes: number;
  firstPassMs: Record<string, number>;
  dropped: number;
  proposedNotCommitted: number;
  leftMatchable: number;
  mixedBuildMatches: number;
  partiesSplit: number;
}

function committedMatchesPerS(run: EndToEnd): number {
  return round(run.committed.length / (run.elapsedMs / 1_000));
}

async function endToEnd(pool: readonly MatchCandidate[], options: Options): Promise<EndToEnd> {
  const migrate = loadConfig(MigrateConfig);
  const admin = () =>
    new Client({
      host: LOCALHOST,
      port: migrate.DATABASE_PORT,
      user: migrate.DATABASE_USER,
      password: migrate.DATABASE_PASSWORD,
      database: migrate.DATABASE_ADMIN_NAME,
    });
  const redis = new Redis({ host: LOCALHOST, port: 6379 });
  const adminClient = admin();
  await adminClient.connect();
  await adminClient.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await adminClient.query(`CREATE DATABASE ${DATABASE}`);
  await deletePrefix(redis, PREFIX);
  let context: INestApplicationContext | undefined;
  const seeding = new DataSource(
    dataSourceOptions(
      { ...migrate, DATABASE_HOST: LOCALHOST, DATABASE_NAME: DATABASE, DATABASE_POOL_SIZE: 2 },
      { migrations: allMigrations, applicationName: 'mp-bench-seed' },
    ),
  );
  try {
    await seeding.initialize();
    await new Migrator(seeding).up();

    const config = loadConfig(MatcherConfig, {
      DATABASE_HOST: LOCALHOST,
      DATABASE_PORT: String(migrate.DATABASE_PORT),
      DATABASE_USER: migrate.DATABASE_USER,
      ...(migrate.DATABASE_PASSWORD ? { DATABASE_PASSWORD: migrate.DATABASE_PASSWORD } : {}),
      DATABASE_NAME: DATABASE,
      REDIS_HOST: LOCALHOST,
      REDIS_KEY_PREFIX: PREFIX,
      LOG_LEVEL: 'silent',
      HEALTH_HOST: LOCALHOST,
      HEALTH_PORT: String(await freePort()),
      QUEUE_MODES: BENCH_RULES.map((r) => `${r.mode}:${r.teamSize}x${r.teamCount}`).join(','),
      PROBE_REGIONS: BENCH_REGIONS.join(','),
      MATCH_WIDENING_BY_MODE: BENCH_RULES.map((r) => `${r.mode}=${wideningText(r)}`).join(';'),
      QUEUE_MODE_ATTRIBUTES: BENCH_MODE_ATTRIBUTES,
      MATCHER_COMMIT_BATCH: String(options.commitBatch),
    });
    context = await NestFactory.createApplicationContext(
      MatcherModule.forRoot(config, { schedule: 'manual', imports: [PlayerStoreModule] }),
      { logger: false },
    );
    progress(`e2e: writing ${pool.length} players and searching tickets through the stores`);
    const seedStarted = performance.now();
    await seed(context, pool);
    const seedMs = performance.now() - seedStarted;
    progress(`e2e: written in ${Math.round(seedMs)} ms`);
    const loop = context.get(MatcherLoop);
    // The production path from PostgreSQL to the pool: the rebuild every matcher runs at start.
    const rebuildStarted = performance.now();
    await loop.rebuild();
    progress(
      `e2e: projection rebuilt in ${Math.round(performance.now() - rebuildStarted)} ms; passing`,
    );

    const reports: PassReport[] = [];
    const started = performance.now();
    // Rounds of passes until one commits nothing; within a round the modes pass concurrently, as
    // the matcher's mode loops do, each on its own lease session. (A long first pass lets tickets
    // age into wider steps, so a later round can still match some.)
    for (;;) {
      const round = await Promise.all(
        BENCH_RULES.map(async ({ mode }) => {
          const report = await loop.passNow(mode);
          if (!report) throw new Error(`no lease for ${mode}`);
          if (report.aborted) throw new Error(`${mode} pass aborted: ${report.aborted}`);
          progress(
            `e2e: ${mode} pass: ${report.matchable} matchable, ${report.committed.length} committed, ` +
              `${report.dropped.length} dropped in ${Math.round(report.durationMs)} ms`,
          );
          return report;
        }),
      );
      reports.push(...round);
      if (round.every((report) => report.committed.length === 0)) break;
    }
    const elapsedMs = performance.now() - started;
    const committed = reports.flatMap((report) => report.committed);
    // What the last pass of each mode left that it could have matched at its own `now` (0 unless
    // the commit path lost a match the function proposed).
    let leftover = 0;
    for (const rules of BENCH_RULES) {
      const last = reports.filter((report) => report.mode === rules.mode).at(-1);
      const left = await context.get(CandidateProjection).candidates(rules.mode);
      leftover += leftMatchable(
        left.map((c) => ({
          ...c,
          predictedRtt: c.predictedRtt as Record<string, number>,
          attributes: c.attributes,
        })),
        [rules],
        last?.evaluatedAt ?? new Date(),
      );
    }
    const firstPassMs: Record<string, number> = {};
    for (const report of reports) firstPassMs[report.mode] ??= Math.round(report.durationMs);
    return {
      committed: committed.map((match) => ({ worstRttMs: match.proposal.worstRttMs })),
      players: committed.reduce((sum, match) => sum + match.tickets.length, 0),
      elapsedMs,
      seedMs,
      passes: reports.length,
      firstPassMs,
      dropped: reports.reduce((sum, report) => sum + report.dropped.length, 0),
      proposedNotCommitted: reports.reduce(
        (sum, report) => sum + report.proposed - report.committed.length,
        0,
      ),
      leftMatchable: leftover,
      // From the committed rows themselves (attributes as PostgreSQL returned them).
      mixedBuildMatches: mixedBuildMatches(
        committed.map((match) => match.tickets.map((ticket) => ticket.attributes)),
      ),
      partiesSplit: splitParties(
        pool,
        committed.map((match) => match.proposal),
      ),
    };
  } finally {
    await context?.close().catch(() => undefined);
    if (seeding.isInitialized) await seeding.destroy();
    await adminClient
      .query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
      .catch(() => undefined);
    await adminClient.end();
    await deletePrefix(redis, PREFIX);
    redis.disconnect();
  }
}

/**
 * The pool written through the production stores, as the API writes it: each player as
 * POST /v1/sessions creates a guest (PlayerStore), each ticket as an enqueue creates it
 * (TicketStore.create: the row, its creation envelope and, after the commit, its projection), a
 * party's members in one transaction as a party enqueue creates them. Not through the HTTP routes
 * (sessions, probes, idempotency keys): that would measure the API, not the matcher. A ticket
 * keeps its age in the pool through `queuedSince` (the earlier enqueue time requeue priority
 * uses), relative to when writing began; the players get the store's ids.
 */
async function seed(
  context: INestApplicationContext,
  pool: readonly MatchCandidate[],
): Promise<void> {
  const players = context.get(PlayerStore, { strict: false });
  const tickets = context.get(TicketStore, { strict: false });
  const dataSource = context.get(DataSource);
  // The pool's ages are relative to the pure bench's clock; keep them relative to now.
  const shift = Date.now() - BENCH_NOW.getTime();
  const groups = new Map<string, MatchCandidate[]>();
  for (const candidate of pool) {
    const key = candidate.party?.id ?? candidate.ticketId;
    const group = groups.get(key);
    if (group) group.push(candidate);
    else groups.set(key, [candidate]);
  }
  const transactions: MatchCandidate[][][] = [];
  let batch: MatchCandidate[][] = [];
  let batchTickets = 0;
  for (const group of groups.values()) {
    batch.push(group);
    batchTickets += group.length;
    if (batchTickets >= SEED_TICKETS_PER_TRANSACTION) {
      transactions.push(batch);
      batch = [];
      batchTickets = 0;
    }
  }
  if (batch.length > 0) transactions.push(batch);
  const write = (groupsOfTransaction: MatchCandidate[][]) =>
    runInTransaction(dataSource, async (manager, unit) => {
      for (const group of groupsOfTransaction) {
        for (const candidate of group) {
          const playerId = await players.createGuest(manager, randomBytes(32));
          await tickets.create(
            unit,
            {
              id: candidate.ticketId,
              playerId,
              mode: candidate.mode,
              rating: candidate.rating,
              predictedRtt: candidate.predictedRtt,
              ...(candidate.attributes ? { attributes: candidate.attributes } : {}),
              queuedSince: new Date(candidate.enqueuedAt.getTime() + shift),
            },
            new Date(),
            candidate.party,
          );
        }
      }
    });
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_CONCURRENCY }, async () => {
      for (let index = next++; index < transactions.length; index = next++) {
        await write(transactions[index] ?? []);
      }
    }),
  );
}

/** Transactions of about this many tickets, this many at once: a few seconds per 10,000. */
const SEED_TICKETS_PER_TRANSACTION = 500;
const SEED_CONCURRENCY = 4;

function wideningText(rules: ModeRules): string {
  return rules.widening
    .map(
      (s) =>
        `${s.afterMs}:${s.maxRttMs}:${Number.isFinite(s.ratingWindow) ? s.ratingWindow : 'inf'}`,
    )
    .join(',');
}

/** Candidates left in the pool that could still anchor a match among themselves (should be 0). */
function leftMatchable(
  left: readonly MatchCandidate[],
  rules: readonly ModeRules[],
  at: Date,
): number {
  const again = formMatches(left, rules, at);
  return again.matches.reduce((sum, match) => sum + match.participants.length, 0);
}

// ---- helpers -----------------------------------------------------------------------------------

async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

const CANDIDATES = { min: 2, max: 200_000 } as const;

const FLAGS: FlagSpec[] = [
  { name: 'candidates', description: 'pool size', int: { ...CANDIDATES, default: 10_000 } },
  {
    name: 'candidates-curve',
    description: 'pool sizes of the cost curve (pure pass and committed matches/s), or off',
    string: { default: DEFAULT_CANDIDATES_CURVE },
  },
  {
    name: 'passes',
    description: 'timed pure passes (after one warm-up)',
    int: { min: 1, max: 1_000, default: 7 },
  },
  {
    name: 'seed',
    description: 'PRNG seed for the pool',
    int: { min: 0, max: 2 ** 32 - 1, default: 20261201 },
  },
  {
    name: 'max-age',
    description: 'oldest ticket age, seconds',
    int: { min: 0, max: 86_400, default: 120 },
  },
  {
    name: 'party-share',
    description: 'percent of players who queue in parties of 2-4 (squad)',
    int: { min: 0, max: 90, default: Math.round(DEFAULT_PARTY_SHARE * 100) },
  },
  {
    name: 'commit-batch',
    description: 'matches per commit transaction (MATCHER_COMMIT_BATCH)',
    int: { min: 1, max: 1_000, default: 16 },
  },
  { name: 'help', description: 'print this help', switch: true },
];

function optionsFrom(argv: readonly string[]): Options {
  const command = 'npm run bench:matcher --';
  const summary =
    'Matcher benchmark: pure pass time and quality against FIFO, then committed matches/s through the real commit path. Needs PostgreSQL and Redis on 127.0.0.1.';
  try {
    const flags = parseFlags(argv, FLAGS);
    if (flags.help === true) {
      process.stdout.write(usage(command, summary, FLAGS));
      process.exit(0);
    }
    return {
      candidates: flags.candidates as number,
      curve: candidatesCurve(flags['candidates-curve'] as string, CANDIDATES),
      passes: flags.passes as number,
      seed: flags.seed as number,
      maxAgeSeconds: flags['max-age'] as number,
      partyShare: (flags['party-share'] as number) / 100,
      commitBatch: flags['commit-batch'] as number,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`bench:matcher: ${error.message}\n\n${usage(command, summary, FLAGS)}`);
    process.exit(2);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `bench:matcher: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
