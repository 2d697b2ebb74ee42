/**
 * PostgreSQL's own ceiling for the outbox's writing transaction, measured by pgbench in the same
 * run as the bench it scales: one aggregate's revision bumped and its event inserted. bench:outbox
 * measures both shapes; bench:notify paces its writers at a fraction of the writers' shape.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { cpuUsage, sampleCpu, startChild, type CpuUsage } from './bench.processes';
import type { ClusterWatch, StatementReport } from './postgres-cost';

const PGBENCH = existsSync('/usr/bin/pgbench') ? '/usr/bin/pgbench' : 'pgbench';

/** Aggregate ids the bench and pgbench both derive from 1..N (pgbench has no list to pick from). */
export function aggregateId(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** The pgbench spelling of {@link aggregateId}. */
const PGBENCH_AGGREGATE_ID = `('00000000-0000-4000-8000-' || lpad(to_hex(:n::bigint), 12, '0'))::uuid`;

/** `bench_aggregates`, ids 1..count at revision 0: bench-local, owned by no module. */
export async function createBenchAggregates(dataSource: DataSource, count: number): Promise<void> {
  await dataSource.query(
    'CREATE TABLE bench_aggregates (id uuid PRIMARY KEY, revision bigint NOT NULL)',
  );
  await dataSource.query(
    `INSERT INTO bench_aggregates (id, revision)
     SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 0 FROM generate_series(1, $1) AS n`,
    [count],
  );
  await dataSource.query('VACUUM ANALYZE bench_aggregates');
}

/** Fresh tables for the next phase: outbox rows left by pgbench or an earlier phase are gone. */
export async function clearOutbox(dataSource: DataSource): Promise<void> {
  await dataSource.query('TRUNCATE outbox, outbox_delivery_attempts');
  await dataSource.query('VACUUM ANALYZE bench_aggregates');
  await dataSource.query('VACUUM ANALYZE outbox');
}

/** What the events say: a ticket bouncing between SEARCHING and MATCHED. */
export interface EventShape {
  playerId: string;
  matchId: string;
  enqueuedAt: string;
}

export function pgbenchScripts(shape: EventShape): { oneStatement: string; writersShape: string } {
  const payload = `jsonb_build_object('ticketId', a.id, 'mode', 'duel', 'enqueuedAt', '${shape.enqueuedAt}',
         'from', CASE WHEN a.revision % 2 = 0 THEN 'SEARCHING' ELSE 'MATCHED' END,
         'to', CASE WHEN a.revision % 2 = 0 THEN 'MATCHED' ELSE 'SEARCHING' END,
         'matchId', '${shape.matchId}')`;
  const insert = `INSERT INTO outbox (event, aggregate_type, aggregate_id, revision, occurred_at, player_ids, payload)
SELECT 'ticket.state_changed', 'ticket', a.id, a.revision, now(), ARRAY['${shape.playerId}']::uuid[],
       ${payload}`;
  return {
    // The bare transaction in one statement: the revision flows from the UPDATE into the INSERT.
    oneStatement: `\\set n random(1, :aggregates)
WITH a AS (
  UPDATE bench_aggregates SET revision = revision + 1 WHERE id = ${PGBENCH_AGGREGATE_ID}
  RETURNING id, revision
)
${insert}
  FROM a;
`,
    // The writers' shape: BEGIN, UPDATE ... RETURNING, INSERT, COMMIT.
    writersShape: `\\set n random(1, :aggregates)
BEGIN;
UPDATE bench_aggregates SET revision = revision + 1 WHERE id = ${PGBENCH_AGGREGATE_ID} RETURNING revision \\gset
${insert}
  FROM (SELECT ${PGBENCH_AGGREGATE_ID} AS id, :revision::bigint AS revision) AS a;
COMMIT;
`,
  };
}

export interface PgbenchTarget {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

export interface PgbenchLoad {
  clients: number;
  seconds: number;
  aggregates: number;
  /** The cluster's CPU (and statements) per transaction, when the bench watches it. */
  watch?: ClusterWatch;
}

export interface Ceiling {
  tps: number;
  cpu: CpuUsage;
  postgresCpuMsPerTx: number | null;
  statements?: StatementReport;
}

/** Runs `script` with pgbench (prepared statements, two threads) against `target`. */
export async function runPgbench(
  target: PgbenchTarget,
  script: string,
  load: PgbenchLoad,
): Promise<Ceiling> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-bench-'));
  const file = path.join(dir, 'outbox.pgbench.sql');
  writeFileSync(file, script);
  const before = sampleCpu([], [target.database]);
  const ticksBefore = await load.watch?.begin();
  try {
    const run = startChild(
      'pgbench',
      PGBENCH,
      [
        ...['-n', '-f', file, '-c', String(load.clients), '-j', '2'],
        ...['-T', String(load.seconds), '-M', 'prepared', '-D', `aggregates=${load.aggregates}`],
      ],
      {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        PGHOST: target.host,
        PGPORT: String(target.port),
        PGUSER: target.user,
        PGDATABASE: target.database,
        PGAPPNAME: 'mp-bench-pgbench',
        ...(target.password ? { PGPASSWORD: target.password } : {}),
      },
    );
    const code = await run.exited;
    const tps = /tps = ([0-9.]+)/.exec(run.output())?.[1];
    const transactions = /actually processed: (\d+)/.exec(run.output())?.[1];
    if (code !== 0 || tps === undefined || transactions === undefined)
      throw new Error(`pgbench failed (${code}):\n${run.output()}`);
    const cost =
      ticksBefore === undefined
        ? { postgresCpuMsPerEvent: null }
        : await load.watch!.end(ticksBefore, Number(transactions));
    return {
      tps: Math.round(Number(tps)),
      cpu: cpuUsage([], before, sampleCpu([], [target.database])),
      postgresCpuMsPerTx: cost.postgresCpuMsPerEvent,
      ...(cost.statements ? { statements: cost.statements } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The writers' shape ceiling in a migrated database that has no bench_aggregates of its own: the
 * table is made for the run and dropped after it, with the outbox rows pgbench wrote.
 */
export async function writersShapeCeiling(
  dataSource: DataSource,
  target: PgbenchTarget,
  load: PgbenchLoad,
): Promise<Ceiling> {
  await createBenchAggregates(dataSource, load.aggregates);
  try {
    const { writersShape } = pgbenchScripts({
      playerId: randomUUID(),
      matchId: randomUUID(),
      enqueuedAt: new Date().toISOString(),
    });
    return await runPgbench(target, writersShape, load);
  } finally {
    await clearOutbox(dataSource);
    await dataSource.query('DROP TABLE bench_aggregates');
  }
}
