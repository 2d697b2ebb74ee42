import { SetMetadata } from '@nestjs/common';

/**
 * Retention, as its owners declare it: the module that owns a table says which of its rows may go
 * and after which window ({@link RetentionPolicyDefinition}), and a module whose rows refer to
 * another's says which of those must stay ({@link RetentionHold}). The maintenance app discovers
 * every `@RetainsRows()` provider it imports and runs the purge; it holds no table's SQL itself.
 */
export interface RetentionPolicyDefinition {
  /** Unique across the deployment; a label of the retention metrics. */
  readonly name: string;
  readonly table: string;
  /** The alias the statement gives `table`, which `guards` and holds name it by. */
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
  readonly extraParams?: (windows: Readonly<Record<string, number>>) => unknown[];
}

/** A condition another module puts on a table's deletable rows: rows it still refers to stay. */
export interface RetentionHold {
  readonly table: string;
  /** Why (for the reader, and the start-up log). */
  readonly reason: string;
  /** A boolean SQL condition over the table's row, given the alias the purge statement uses. */
  guard(alias: string): string;
}

/** What one owning module contributes. */
export interface RetentionContribution {
  readonly retentionPolicies?: readonly RetentionPolicyDefinition[];
  readonly retentionHolds?: readonly RetentionHold[];
}

export const RETAINS_ROWS = Symbol('matchplane:retains-rows');

/** Marks a provider implementing {@link RetentionContribution}, for the maintenance app to discover. */
export const RetainsRows = (): ClassDecorator => SetMetadata(RETAINS_ROWS, true);
