import { SetMetadata } from '@nestjs/common';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * Retention, as its owners declare it: the module that owns a table provides one
 * `@RetainsRows()` {@link RetentionOwner} saying which of its rows may go, after which window and
 * after which other policies of a round ({@link RetentionPolicyDefinition}); rows another module
 * still refers to stay by the owner's own guard over that module's read model (a view,
 * READ_MODELS). The owner runs its own batches and measures its own lag; the maintenance app
 * discovers the owners and only schedules them (which policy, when, how many rows, how long).
 */
export interface RetentionPolicyDefinition {
  /** Unique across the deployment; a label of the retention metrics. */
  readonly name: string;
  readonly table: string;
  /** The alias the statement gives `table`, which `guards` name it by. */
  readonly alias: string;
  /** The configuration variable holding the window, in seconds (RETENTION_*_SECONDS). */
  readonly window: string;
  /** The index the predicate (and its ORDER BY) is served by; the plan test holds us to it. */
  readonly index: string;
  /** The column the window runs from; rows go oldest first along it. */
  readonly age: string;
  /** `WHERE` conditions beyond `age < $1`; `$3`... are {@link extraParams}. */
  readonly guards?: readonly string[];
  /** Parameters after `$1` (cutoff) and `$2` (limit), from the configured windows. */
  readonly extraParams?: (windows: RetentionWindowValues) => unknown[];
  /** Policies (of any owner) a round must take before this one, where the order matters. */
  readonly after?: readonly string[];
}

/** The configured windows and margins, in seconds, by variable name. */
export type RetentionWindowValues = Readonly<Record<string, number>>;

/** A policy's two statements, as its owner runs them. */
export interface RetentionStatements {
  /** One batch: deletes at most `$2` deletable rows, oldest first, skipping rows others hold. */
  readonly purgeSql: string;
  /**
   * Deletion lag (run with limit 1): seconds since the oldest deletable row passed its window; no
   * row when none is left. Rows a guard keeps are not deletable, so they are not lag.
   */
  readonly lagSql: string;
}

/**
 * A batch locks its rows `FOR UPDATE SKIP LOCKED`, so replicas (and live transactions) never wait
 * for each other and each row is deleted, and counted, by one of them. It deletes by ctid: the
 * row is locked, so its ctid is stable until commit, and the outer scan is a TID scan whatever
 * the table's key. ORDER BY the window column keeps the index an ordered range scan even when
 * most of the table is deletable (a catch-up), instead of a sequential scan through dead tuples.
 */
export function retentionStatements(policy: RetentionPolicyDefinition): RetentionStatements {
  const { table, alias, age } = policy;
  const conditions = [`${alias}.${age} < $1::timestamptz`, ...(policy.guards ?? [])].join(
    '\n      AND ',
  );
  return {
    purgeSql: `DELETE FROM ${table}
 WHERE ctid = ANY (ARRAY(
   SELECT ${alias}.ctid
     FROM ${table} ${alias}
    WHERE ${conditions}
    ORDER BY ${alias}.${age}
    LIMIT $2
      FOR UPDATE OF ${alias} SKIP LOCKED))`,
    lagSql: `SELECT extract(epoch FROM $1::timestamptz - ${alias}.${age})::float8 AS lag_seconds
     FROM ${table} ${alias}
    WHERE ${conditions}
    ORDER BY ${alias}.${age}
    LIMIT $2`,
  };
}

/** One batch of one policy: rows older than `cutoff`, at most `limit` of them. */
export interface RetentionBatch {
  readonly policy: string;
  readonly cutoff: Date;
  readonly limit: number;
  readonly windows: RetentionWindowValues;
}

/**
 * What one owning module declares and runs: its policies, and each policy's batch and lag over
 * its own tables. The caller bounds the transaction a batch runs in (timeouts, one per batch).
 */
export abstract class RetentionOwner {
  abstract readonly policies: readonly RetentionPolicyDefinition[];
  private statementsByPolicy?: ReadonlyMap<string, RetentionStatements>;

  /** The statements of one of this owner's policies (the ownership and plan tests read them). */
  statements(policy: string): RetentionStatements {
    this.statementsByPolicy ??= new Map(
      this.policies.map((definition) => [definition.name, retentionStatements(definition)]),
    );
    const statements = this.statementsByPolicy.get(policy);
    if (!statements) throw new Error(`${this.constructor.name} declares no policy ${policy}`);
    return statements;
  }

  /** Deletes one batch inside the caller's transaction (on `runner`); returns the rows deleted. */
  async purge(runner: QueryRunner, batch: RetentionBatch): Promise<number> {
    const result = (await runner.query(
      this.statements(batch.policy).purgeSql,
      this.parameters(batch),
      true,
    )) as { affected?: number };
    return result.affected ?? 0;
  }

  /** Seconds since the policy's oldest deletable row passed its window (0: none left). */
  async lagSeconds(
    runner: DataSource | EntityManager,
    batch: Omit<RetentionBatch, 'limit'>,
  ): Promise<number> {
    const [row] = await runner.query<{ lag_seconds: number }[]>(
      this.statements(batch.policy).lagSql,
      this.parameters({ ...batch, limit: 1 }),
    );
    return Math.max(0, row?.lag_seconds ?? 0);
  }

  /**
   * How far another module's rows hold the policy's cutoff back (s; 0 when they do not), for the
   * owners whose guard keeps rows past their window (idempotency keys behind a dead letter).
   */
  holdSeconds(
    _runner: DataSource | EntityManager,
    _batch: Omit<RetentionBatch, 'limit'>,
  ): Promise<number> {
    return Promise.resolve(0);
  }

  /** `$1` = the cutoff, `$2` = the limit, then the policy's own. */
  parameters(batch: RetentionBatch): unknown[] {
    const definition = this.policies.find((policy) => policy.name === batch.policy);
    return [batch.cutoff, batch.limit, ...(definition?.extraParams?.(batch.windows) ?? [])];
  }
}

export const RETAINS_ROWS = Symbol('matchplane:retains-rows');

/**
 * Marks a module's one {@link RetentionOwner} provider, for the maintenance app to discover: the
 * only place the module declares its retention.
 */
export const RetainsRows = (): ClassDecorator => SetMetadata(RETAINS_ROWS, true);
