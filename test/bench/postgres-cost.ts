/**
 * Where PostgreSQL's time goes: the CPU of a whole cluster (every backend, including the ones that
 * exit between two samples, as pgbench's do) and, on a cluster with pg_stat_statements loaded, the
 * per-statement execution and planning time. Used by bench:outbox (`--pg-stats`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Client, type ClientConfig } from 'pg';
import { makeScratch, PrivatePostgres, removeScratch } from '../chaos/private-services';

const CLOCK_TICKS_PER_S = 100; // USER_HZ, as in bench.processes

/** The postgresql.conf lines that make a cluster count statements and their planning. */
export const STATEMENT_STATS_SETTINGS = [
  `shared_preload_libraries = 'pg_stat_statements'`,
  `pg_stat_statements.track = top`,
  `pg_stat_statements.track_planning = on`,
  `pg_stat_statements.max = 1000`,
] as const;

/** A cluster of the bench's own (its own port and directory), counting statements. */
export interface ScratchCluster {
  port: number;
  user: string;
  adminDatabase: string;
  destroy(): Promise<void>;
}

export async function startScratchCluster(): Promise<ScratchCluster> {
  const root = makeScratch('matchplane-bench-pg-');
  const cluster = await PrivatePostgres.create(root, 55_432, STATEMENT_STATS_SETTINGS);
  await cluster.waitReady();
  return {
    port: cluster.port,
    user: 'postgres',
    adminDatabase: 'postgres',
    async destroy() {
      await cluster.destroy();
      removeScratch(root);
    },
  };
}

// ---- the cluster's CPU ---------------------------------------------------------------------------

function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The postmaster of the cluster `client` is connected to (its backend's parent). */
export async function postmasterOf(client: Client): Promise<number> {
  const [row] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
  const parent = row ? statFields(row.pid)?.[1] : undefined;
  if (parent === undefined)
    throw new Error('the PostgreSQL backend is not a process of this machine');
  return Number(parent);
}

/**
 * CPU ticks the cluster has used so far: the postmaster, its live children, and (through the
 * postmaster's cutime and cstime) every child it has reaped, such as a pgbench client's backend.
 */
export function clusterCpuTicks(postmaster: number): number {
  const own = statFields(postmaster);
  if (own === undefined) throw new Error(`PostgreSQL's postmaster ${postmaster} is gone`);
  let ticks = [11, 12, 13, 14].reduce((sum, field) => sum + Number(own[field]), 0);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields?.[1] === String(postmaster)) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}

/** Milliseconds of the cluster's CPU per unit of work between two tick readings. */
export function cpuMsPer(ticksBefore: number, ticksAfter: number, units: number): number | null {
  if (units <= 0) return null;
  return (
    Math.round((((ticksAfter - ticksBefore) * 1000) / CLOCK_TICKS_PER_S / units) * 1000) / 1000
  );
}

// ---- per statement ------------------------------------------------------------------------------

export interface StatementCost {
  /** The normalised text, whitespace folded, cut at 160 characters. */
  query: string;
  calls_per_event: number;
  rows_per_call: number;
  exec_ms_per_event: number;
  plan_ms_per_event: number;
  /** Share of all statements' exec + plan time. */
  share_pct: number;
}

export interface StatementReport {
  events: number;
  exec_ms_per_event: number;
  plan_ms_per_event: number;
  /** Planning's share of exec + plan time. */
  planner_share_pct: number;
  statements_per_event: number;
  statements: StatementCost[];
}

export async function resetStatementStats(client: Client): Promise<void> {
  await client.query('SELECT pg_stat_statements_reset()');
}

interface StatementRow {
  query: string;
  calls: string;
  rows: string;
  total_exec_time: number;
  total_plan_time: number;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** Every statement of `database` since the last reset, per event, costliest first. */
export async function readStatementStats(
  client: Client,
  database: string,
  events: number,
  top = 15,
): Promise<StatementReport> {
  const { rows } = await client.query<StatementRow>(
    `SELECT s.query, s.calls, s.rows, s.total_exec_time, s.total_plan_time
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_statements%'
      ORDER BY s.total_exec_time + s.total_plan_time DESC`,
    [database],
  );
  const per = (value: number) => (events > 0 ? value / events : 0);
  const exec = rows.reduce((sum, row) => sum + row.total_exec_time, 0);
  const plan = rows.reduce((sum, row) => sum + row.total_plan_time, 0);
  const calls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
  return {
    events,
    exec_ms_per_event: round3(per(exec)),
    plan_ms_per_event: round3(per(plan)),
    planner_share_pct: exec + plan > 0 ? Math.round((plan / (exec + plan)) * 1000) / 10 : 0,
    statements_per_event: round3(per(calls)),
    statements: rows.slice(0, top).map((row) => ({
      query: row.query.replace(/\s+/g, ' ').trim().slice(0, 160),
      calls_per_event: round3(per(Number(row.calls))),
      rows_per_call: Number(row.calls) > 0 ? round3(Number(row.rows) / Number(row.calls)) : 0,
      exec_ms_per_event: round3(per(row.total_exec_time)),
      plan_ms_per_event: round3(per(row.total_plan_time)),
      share_pct:
        exec + plan > 0
          ? Math.round(((row.total_exec_time + row.total_plan_time) / (exec + plan)) * 1000) / 10
          : 0,
    })),
  };
}

/**
 * Watches one cluster across a bench's phases: its CPU per event always, and its statements when
 * pg_stat_statements is loaded (then the counters are reset as each phase begins).
 */
export class ClusterWatch {
  private constructor(
    private readonly client: Client,
    private readonly postmaster: number,
    private readonly database: string,
    private readonly countsStatements: boolean,
  ) {}

  /** `connection` reaches any database of the cluster; `database` is the one the phases use. */
  static async open(
    connection: ClientConfig,
    database: string,
    countsStatements: boolean,
  ): Promise<ClusterWatch> {
    const client = new Client({ ...connection, application_name: 'mp-bench-cluster-watch' });
    await client.connect();
    if (countsStatements) await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return new ClusterWatch(client, await postmasterOf(client), database, countsStatements);
  }

  /** The cluster's CPU ticks so far; resets the statement counters first. */
  async begin(): Promise<number> {
    if (this.countsStatements) await resetStatementStats(this.client);
    return clusterCpuTicks(this.postmaster);
  }

  async end(
    ticksBefore: number,
    events: number,
  ): Promise<{ postgresCpuMsPerEvent: number | null; statements?: StatementReport }> {
    const postgresCpuMsPerEvent = cpuMsPer(ticksBefore, clusterCpuTicks(this.postmaster), events);
    if (!this.countsStatements) return { postgresCpuMsPerEvent };
    return {
      postgresCpuMsPerEvent,
      statements: await readStatementStats(this.client, this.database, events),
    };
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** The report as Markdown table rows, for docs/BENCHMARKS.md. */
export function statementTable(report: StatementReport): string {
  const lines = [
    '| statement | calls/event | rows/call | exec ms/event | plan ms/event | share |',
    '|---|---:|---:|---:|---:|---:|',
    ...report.statements.map(
      (s) =>
        `| \`${s.query.replaceAll('|', '\\|')}\` | ${s.calls_per_event} | ${s.rows_per_call} | ${s.exec_ms_per_event} | ${s.plan_ms_per_event} | ${s.share_pct} % |`,
    ),
  ];
  return lines.join('\n');
}
