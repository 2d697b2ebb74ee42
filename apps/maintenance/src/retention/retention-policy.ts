import { ConfigError } from '@matchplane/config';
import { type MaintenanceConfig } from '../maintenance.config';
import { MatchRetention } from '@matchplane/matches';
import { OutboxRetention } from '@matchplane/outbox';
import type { RetentionContribution, RetentionPolicyDefinition } from '@matchplane/persistence';
import { SessionRetention } from '@matchplane/players';
import { TicketRetention } from '@matchplane/tickets';
import { IdempotencyRetention } from '@matchplane/idempotency';
import { ProbeRetention } from '@matchplane/latency';

/**
 * What the maintenance app purges: one policy per kind of row, each declared by the module that
 * owns the table (`@RetainsRows()`, libs/persistence retention.ts) with its window (from
 * MaintenanceConfig), the predicate that makes a row deletable, and the index that predicate
 * rides on. Both statements of a policy take `$1` = the cutoff (now minus the window), `$2` = a
 * row limit, then the policy's extra parameters (`$3`, ...). The list below is the purge order.
 */

export const RETENTION_POLICY_NAMES = [
  'outbox_dead_letters',
  'outbox_published',
  'idempotency_keys',
  'sessions_expired',
  'sessions_revoked',
  'probe_challenges',
  'probe_measurements',
  'matches',
  'queue_tickets',
] as const;
export type RetentionPolicyName = (typeof RETENTION_POLICY_NAMES)[number];

/** The windows, in seconds, as MaintenanceConfig names them. */
export type RetentionWindows = Pick<
  MaintenanceConfig,
  | 'RETENTION_IDEMPOTENCY_KEYS_SECONDS'
  | 'RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS'
  | 'RETENTION_OUTBOX_PUBLISHED_SECONDS'
  | 'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS'
  | 'RETENTION_SESSIONS_SECONDS'
  | 'RETENTION_PROBE_CHALLENGES_SECONDS'
  | 'RETENTION_PROBE_MEASUREMENTS_SECONDS'
  | 'RETENTION_TICKETS_SECONDS'
  | 'RETENTION_MATCHES_SECONDS'
  | 'SESSION_TTL_SECONDS'
  | 'CLIENT_RETRY_HORIZON_SECONDS'
>;

type WindowVariable = Exclude<
  keyof RetentionWindows,
  | 'RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS'
  | 'SESSION_TTL_SECONDS'
  | 'CLIENT_RETRY_HORIZON_SECONDS'
>;

export interface RetentionPolicy {
  name: RetentionPolicyName;
  table: string;
  window: WindowVariable;
  /** The index the predicate (and its ORDER BY) is served by; the plan test holds us to it. */
  index: string;
  /** One batch: deletes at most `$2` deletable rows, oldest first, skipping rows others hold. */
  purgeSql: string;
  /**
   * Deletion lag (run with limit 1): seconds since the oldest deletable row passed its window; no
   * row when none is left. Rows a guard keeps (a live allocation, a dead letter) are not
   * deletable, so they are not lag.
   */
  lagSql: string;
  /** Parameters after `$1` (cutoff) and `$2` (limit). */
  extraParams(windows: RetentionWindows): unknown[];
}

export class RetentionRegistrationError extends Error {
  override name = 'RetentionRegistrationError';
}

const WINDOW_VARIABLES: readonly WindowVariable[] = [
  'RETENTION_IDEMPOTENCY_KEYS_SECONDS',
  'RETENTION_OUTBOX_PUBLISHED_SECONDS',
  'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS',
  'RETENTION_SESSIONS_SECONDS',
  'RETENTION_PROBE_CHALLENGES_SECONDS',
  'RETENTION_PROBE_MEASUREMENTS_SECONDS',
  'RETENTION_TICKETS_SECONDS',
  'RETENTION_MATCHES_SECONDS',
];

/**
 * A batch locks its rows `FOR UPDATE SKIP LOCKED`, so replicas (and live transactions) never wait
 * for each other and each row is deleted, and counted, by one of them. It deletes by ctid: the
 * row is locked, so its ctid is stable until commit, and the outer scan is a TID scan whatever
 * the table's key. ORDER BY the window column keeps the index an ordered range scan even when
 * most of the table is deletable (a catch-up), instead of a sequential scan through dead tuples.
 * The statement is the owner's definition, put together here.
 */
function purgeStatement(policy: RetentionPolicyDefinition, guards: readonly string[]): string {
  const { table, alias, age } = policy;
  return `DELETE FROM ${table}
 WHERE ctid = ANY (ARRAY(
   SELECT ${alias}.ctid
     FROM ${table} ${alias}
    WHERE ${conditions(policy, guards)}
    ORDER BY ${alias}.${age}
    LIMIT $2
      FOR UPDATE OF ${alias} SKIP LOCKED))`;
}

function lagStatement(policy: RetentionPolicyDefinition, guards: readonly string[]): string {
  const { table, alias, age } = policy;
  return `SELECT extract(epoch FROM $1::timestamptz - ${alias}.${age})::float8 AS lag_seconds
     FROM ${table} ${alias}
    WHERE ${conditions(policy, guards)}
    ORDER BY ${alias}.${age}
    LIMIT $2`;
}

function conditions(policy: RetentionPolicyDefinition, guards: readonly string[]): string {
  const { alias, age } = policy;
  return [`${alias}.${age} < $1::timestamptz`, ...guards].join('\n      AND ');
}

/**
 * The policies the owning modules declared, in purge order. Dead letters go first, so one leaving its window stops holding idempotency keys
 * back in the same pass; matches go before tickets, since a ticket a match still lists cannot be
 * deleted and deleting the match cascades its participants, assignments, allocation and roster.
 * Refuses (as the dispatcher does for subscribers) a policy missing, twice, unknown or with an
 * unknown window.
 */
export function assembleRetentionPolicies(
  contributions: readonly RetentionContribution[],
): RetentionPolicy[] {
  const definitions = contributions.flatMap((contribution) => contribution.retentionPolicies);
  const problems: string[] = [];
  const byName = new Map<string, RetentionPolicyDefinition>();
  for (const definition of definitions) {
    if (byName.has(definition.name)) problems.push(`policy ${definition.name} is declared twice`);
    byName.set(definition.name, definition);
    if (!(RETENTION_POLICY_NAMES as readonly string[]).includes(definition.name)) {
      problems.push(`policy ${definition.name} has no place in the purge order`);
    }
    if (!(WINDOW_VARIABLES as readonly string[]).includes(definition.window)) {
      problems.push(`policy ${definition.name} names an unknown window ${definition.window}`);
    }
  }
  for (const name of RETENTION_POLICY_NAMES) {
    if (!byName.has(name)) problems.push(`no module declares policy ${name}`);
  }
  if (problems.length > 0)
    throw new RetentionRegistrationError(`retention: ${problems.join('; ')}`);
  return RETENTION_POLICY_NAMES.map((name) => {
    const definition = byName.get(name)!;
    const guards = definition.guards ?? [];
    return {
      name,
      table: definition.table,
      window: definition.window as WindowVariable,
      index: definition.index,
      purgeSql: purgeStatement(definition, guards),
      lagSql: lagStatement(definition, guards),
      extraParams: (windows: RetentionWindows) => definition.extraParams?.(windows) ?? [],
    };
  });
}

/**
 * Every owner's contribution, for callers without Nest (tests, benches, `new RetentionPurger`);
 * the app discovers the same through {@link RetentionPolicyRegistry}.
 */
export const RETENTION_CONTRIBUTIONS: readonly RetentionContribution[] = [
  new OutboxRetention(),
  new IdempotencyRetention(),
  new SessionRetention(),
  new ProbeRetention(),
  new MatchRetention(),
  new TicketRetention(),
];

export const RETENTION_POLICIES: readonly RetentionPolicy[] =
  assembleRetentionPolicies(RETENTION_CONTRIBUTIONS);

export function retentionPolicy(name: RetentionPolicyName): RetentionPolicy {
  const policy = RETENTION_POLICIES.find((candidate) => candidate.name === name);
  if (!policy) throw new Error(`no retention policy ${name}`);
  return policy;
}

/** The cutoff of a policy at `now`: rows older than this are past their window. */
export function cutoffOf(policy: RetentionPolicy, windows: RetentionWindows, now: Date): Date {
  return new Date(now.getTime() - windows[policy.window] * 1_000);
}

/** Problems no single variable's validation can see; empty when the windows are consistent. */
export function retentionWindowProblems(windows: RetentionWindows): string[] {
  const dead = windows.RETENTION_OUTBOX_DEAD_LETTERS_SECONDS;
  const longer = [...new Set(RETENTION_POLICIES.map((policy) => policy.window))].filter(
    (window) => windows[window] > dead,
  );
  const deadLetterProblems = longer.map(
    (window) =>
      `RETENTION_OUTBOX_DEAD_LETTERS_SECONDS must be at least ${window} (${windows[window]}): dead letters are kept longest (got ${dead})`,
  );
  return [...deadLetterProblems, ...idempotencyHorizonProblems(windows)];
}

/**
 * An idempotency key deleted while a client may still replay its request turns the replay into a
 * second mutation: the window must outlast a session (a client logging in again replays with its
 * old key) and the clients' retry horizon.
 */
function idempotencyHorizonProblems(windows: RetentionWindows): string[] {
  const keys = windows.RETENTION_IDEMPOTENCY_KEYS_SECONDS;
  const horizons = [
    [
      'SESSION_TTL_SECONDS',
      windows.SESSION_TTL_SECONDS,
      'a client that logs in again may replay with its old key',
    ],
    [
      'CLIENT_RETRY_HORIZON_SECONDS',
      windows.CLIENT_RETRY_HORIZON_SECONDS,
      'a client may still replay until then',
    ],
  ] as const;
  return horizons
    .filter(([, horizon]) => keys < horizon)
    .map(
      ([variable, horizon, why]) =>
        `RETENTION_IDEMPOTENCY_KEYS_SECONDS must be at least ${variable} (${horizon}): ${why} (got ${keys})`,
    );
}

/** Throws the same {@link ConfigError} as loadConfig when the windows are inconsistent. */
export function assertRetentionWindows(windows: RetentionWindows): void {
  const problems = retentionWindowProblems(windows);
  if (problems.length > 0) throw new ConfigError(problems);
}
