/**
 * Matcher benchmark: the pure pass (formMatches over the whole pool, one core) and match quality
 * against a naive FIFO grouping, both from the pure bench, then the real commit path end to end:
 * the same pool seeded into PostgreSQL and projected into Redis, and the matcher's own passes
 * (MatcherLoop.passNow: projection read, validCandidate, formMatches, lock + re-check, MatchStore,
 * TicketStore, envelopes, post-commit re-projection) committing everything the pool allows.
 * Needs PostgreSQL and Redis on 127.0.0.1 and a build (`npm run bench:matcher`).
 * Progress goes to stderr; the last stdout line is one JSON object with every figure.
 */
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
import { dataSourceOptions, Migrator } from '@matchplane/persistence';
import { CandidateProjection } from '@matchplane/tickets';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule } from '../../apps/matcher/src/matcher.module';
import type { PassReport } from '../../apps/matcher/src/matching.pass';
import { parseFlags, usage, UsageError, writeResults, type FlagSpec } from './bench.cli';
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
  round,
  splitParties,
} from './matcher-pure.bench';

const DATABASE = 'mp_bench_matcher';
const PREFIX = 'mp_bench_matcher';
const LOCALHOST = '127.0.0.1';
/** The pure bench's clock: the pool's enqueue times are relative to it. */
const BENCH_NOW = new Date('2026-12-01T10:00:00.000Z');

interface Options {
  candidates: number;
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
    committed_matches_per_s: round(e2e.committed.length / (e2e.elapsedMs / 1_000)),
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
    e2e: {
      elapsed_ms: round(e2e.elapsedMs),
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
  passes: number;
  firstPassMs: Record<string, number>;
  dropped: number;
  proposedNotCommitted: number;
  leftMatchable: number;
  mixedBuildMatches: number;
  partiesSplit: number;
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
    progress(`e2e: seeding ${pool.length} searching tickets into ${DATABASE}`);
    await seed(seeding, pool);

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
      MatcherModule.forRoot(config, { schedule: 'manual' }),
      { logger: false },
    );
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
 * BENCH SHORTCUT: players and searching tickets are inserted in bulk rather than through the
 * queue routes (sessions, probes, idempotency keys, creation envelopes), which would take minutes
 * for 10,000 players and measure the API, not the matcher. The rows are what TicketStore.create
 * writes; the projection is then filled by the matcher's own start-up rebuild.
 */
async function seed(dataSource: DataSource, pool: readonly MatchCandidate[]): Promise<void> {
  // The pool's ages are relative to the pure bench's clock; keep them relative to now.
  const shift = Date.now() - BENCH_NOW.getTime();
  for (let start = 0; start < pool.length; start += 2_000) {
    const chunk = pool.slice(start, start + 2_000);
    await dataSource.query(
      `INSERT INTO players (id, rating) SELECT * FROM unnest($1::uuid[], $2::float8[])`,
      [chunk.map((c) => c.playerId), chunk.map((c) => c.rating)],
    );
    await dataSource.query(
      `INSERT INTO queue_tickets (id, player_id, mode, state, revision, predicted_rtt, rating, enqueued_at,
                                  last_heartbeat_at, created_at, updated_at, attributes, party_ticket_id, party_size)
       SELECT t.id, t.player_id, t.mode, 'SEARCHING', 1, t.rtt, t.rating, t.enqueued_at, now(), t.enqueued_at, clock_timestamp(), t.attributes,
              t.party_ticket_id, t.party_size
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::float8[], $6::timestamptz[], $7::jsonb[],
                     $8::uuid[], $9::int[])
           AS t(id, player_id, mode, rtt, rating, enqueued_at, attributes, party_ticket_id, party_size)`,
      [
        chunk.map((c) => c.ticketId),
        chunk.map((c) => c.playerId),
        chunk.map((c) => c.mode),
        chunk.map((c) => JSON.stringify(c.predictedRtt)),
        chunk.map((c) => c.rating),
        chunk.map((c) => new Date(c.enqueuedAt.getTime() + shift)),
        chunk.map((c) => JSON.stringify(c.attributes ?? {})),
        chunk.map((c) => c.party?.id ?? null),
        chunk.map((c) => c.party?.size ?? null),
      ],
    );
  }
}

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

const FLAGS: FlagSpec[] = [
  { name: 'candidates', description: 'pool size', int: { min: 2, max: 200_000, default: 10_000 } },
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
