import { SetMetadata } from '@nestjs/common';

/**
 * Retention, as its owners declare it: the module that owns a table says which of its rows may go
 * and after which window ({@link RetentionPolicyDefinition}); rows another module still refers to
 * stay by the owner's own guard over that module's read model (a view, READ_MODELS). The
 * maintenance app discovers every `@RetainsRows()` provider it imports and runs the purge; it holds
 * no table's SQL itself.
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
  readonly extraParams?: (windows: Readonly<Record<string, number>>) => unknown[];
}

/** What one owning module contributes. */
export interface RetentionContribution {
  readonly retentionPolicies: readonly RetentionPolicyDefinition[];
}

export const RETAINS_ROWS = Symbol('matchplane:retains-rows');

/** Marks a provider implementing {@link RetentionContribution}, for the maintenance app to discover. */
export const RetainsRows = (): ClassDecorator => SetMetadata(RETAINS_ROWS, true);
