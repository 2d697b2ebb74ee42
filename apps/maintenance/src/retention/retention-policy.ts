import { ConfigError } from '@matchplane/config';
import { type MaintenanceConfig } from '../maintenance.config';

/**
 * What the maintenance app purges: one policy per kind of row, each with its window (from
 * MaintenanceConfig), the predicate that makes a row deletable, and the index that predicate
 * rides on. Both statements of a policy take `$1` = the cutoff (now minus the window), `$2` = a
 * row limit, then the policy's extra parameters (`$3`, ...).
 */

export const RETENTION_POLICY_NAMES = [
  'outbox_dead_letters',
  'outbox_published',
  'idempotency_keys',
  'sessions_expired',
  'sessions_revoked',
  'probe_challenges',
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
  | 'RETENTION_TICKETS_SECONDS'
  | 'RETENTION_MATCHES_SECONDS'
  | 'SESSION_TTL_SECONDS'
  | 'CLIENT_RETRY_HORIZON_SECONDS'
>;

type WindowVariable = Exclude<
  keyof RetentionWindows,
  'RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS' | 'SESSION_TTL_SECONDS' | 'CLIENT_RETRY_HORIZON_SECONDS'
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

interface PolicyDefinition {
  name: RetentionPolicyName;
  table: string;
  alias: string;
  window: WindowVariable;
  index: string;
  /** The column the window runs from; rows go oldest first along it. */
  age: string;
  /** `WHERE` conditions beyond `age < $1`, with `alias` naming the table; `$3`... are extra parameters. */
  guards?: string[];
  extraParams?: (windows: RetentionWindows) => unknown[];
}

/**
 * A batch locks its rows `FOR UPDATE SKIP LOCKED`, so replicas (and live transactions) never wait
 * for each other and each row is deleted, and counted, by one of them. It deletes by ctid: the
 * row is locked, so its ctid is stable until commit, and the outer scan is a TID scan whatever
 * the table's key. ORDER BY the window column keeps the index an ordered range scan even when
 * most of the table is deletable (a catch-up), instead of a sequential scan through dead tuples.
 */
function purgeStatement(policy: PolicyDefinition): string {
  const { table, alias, age } = policy;
  return `DELETE FROM ${table}
 WHERE ctid = ANY (ARRAY(
   SELECT ${alias}.ctid
     FROM ${table} ${alias}
    WHERE ${conditions(policy)}
    ORDER BY ${alias}.${age}
    LIMIT $2
      FOR UPDATE OF ${alias} SKIP LOCKED))`;
}

function lagStatement(policy: PolicyDefinition): string {
  const { table, alias, age } = policy;
  return `SELECT extract(epoch FROM $1::timestamptz - ${alias}.${age})::float8 AS lag_seconds
     FROM ${table} ${alias}
    WHERE ${conditions(policy)}
    ORDER BY ${alias}.${age}
    LIMIT $2`;
}

function conditions(policy: PolicyDefinition): string {
  const { alias, age, guards = [] } = policy;
  return [`${alias}.${age} < $1::timestamptz`, ...guards].join('\n      AND ');
}

/**
 * An idempotency key younger than the oldest dead letter (less a margin) may be re-driven by that
 * dead letter's replay, so it stays whatever its age. Evaluated in each batch's own statement, so
 * a row dead-lettered during a pass holds the keys back at once.
 */
export const IDEMPOTENCY_DEAD_LETTER_GUARD = `k.created_at < COALESCE(
            (SELECT min(o.created_at) FROM outbox o WHERE o.status = 'dead')
              - make_interval(secs => $3::float8),
            'infinity')`;

/**
 * How far the dead-letter guard holds the idempotency cutoff back, in seconds (0 or negative:
 * not at all). `$1` = the window cutoff, `$2` = the margin in seconds.
 */
export const IDEMPOTENCY_HOLD_SQL = `SELECT extract(epoch FROM $1::timestamptz
         - (min(created_at) - make_interval(secs => $2::float8)))::float8 AS hold_seconds
  FROM outbox
 WHERE status = 'dead'`;

/**
 * In purge order. Dead letters go first, so one leaving its window stops holding idempotency keys
 * back in the same pass; matches go before tickets, since a ticket a match still lists cannot be
 * deleted (match_participants.ticket_id has no cascade) and deleting the match cascades its
 * participants, assignments, allocation and roster.
 */
const DEFINITIONS: readonly PolicyDefinition[] = [
  {
    name: 'outbox_dead_letters',
    table: 'outbox',
    alias: 'o',
    window: 'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS',
    index: 'outbox_dead_lettered_at_idx',
    age: 'dead_lettered_at',
    guards: [`o.status = 'dead'`],
  },
  {
    name: 'outbox_published',
    table: 'outbox',
    alias: 'o',
    window: 'RETENTION_OUTBOX_PUBLISHED_SECONDS',
    index: 'outbox_published_at_idx',
    age: 'published_at',
    guards: [`o.status = 'published'`],
  },
  {
    name: 'idempotency_keys',
    table: 'idempotency_keys',
    alias: 'k',
    window: 'RETENTION_IDEMPOTENCY_KEYS_SECONDS',
    index: 'idempotency_keys_created_at_idx',
    age: 'created_at',
    guards: [IDEMPOTENCY_DEAD_LETTER_GUARD],
    extraParams: (windows) => [windows.RETENTION_IDEMPOTENCY_DEAD_LETTER_MARGIN_SECONDS],
  },
  {
    name: 'sessions_expired',
    table: 'sessions',
    alias: 's',
    window: 'RETENTION_SESSIONS_SECONDS',
    index: 'sessions_expires_at_idx',
    age: 'expires_at',
  },
  {
    name: 'sessions_revoked',
    table: 'sessions',
    alias: 's',
    window: 'RETENTION_SESSIONS_SECONDS',
    index: 'sessions_revoked_at_idx',
    age: 'revoked_at',
  },
  {
    // Answered or not: an answer is accepted only before expires_at, so after it nothing reads the row.
    name: 'probe_challenges',
    table: 'probe_challenges',
    alias: 'c',
    window: 'RETENTION_PROBE_CHALLENGES_SECONDS',
    index: 'probe_challenges_expires_at_idx',
    age: 'expires_at',
  },
  {
    // A live allocation means a server not yet released; its row is how it gets released.
    name: 'matches',
    table: 'matches',
    alias: 'm',
    window: 'RETENTION_MATCHES_SECONDS',
    index: 'matches_finished_at_idx',
    age: 'finished_at',
    guards: [
      `NOT EXISTS (SELECT 1 FROM allocations a
                    WHERE a.match_id = m.id AND a.state IN ('REQUESTED', 'ALLOCATED'))`,
    ],
  },
  {
    name: 'queue_tickets',
    table: 'queue_tickets',
    alias: 't',
    window: 'RETENTION_TICKETS_SECONDS',
    index: 'queue_tickets_finished_at_idx',
    age: 'finished_at',
    guards: [`NOT EXISTS (SELECT 1 FROM match_participants p WHERE p.ticket_id = t.id)`],
  },
];

export const RETENTION_POLICIES: readonly RetentionPolicy[] = DEFINITIONS.map((definition) => ({
  name: definition.name,
  table: definition.table,
  window: definition.window,
  index: definition.index,
  purgeSql: purgeStatement(definition),
  lagSql: lagStatement(definition),
  extraParams: definition.extraParams ?? (() => []),
}));

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
    ['SESSION_TTL_SECONDS', windows.SESSION_TTL_SECONDS, 'a client that logs in again may replay with its old key'],
    ['CLIENT_RETRY_HORIZON_SECONDS', windows.CLIENT_RETRY_HORIZON_SECONDS, 'a client may still replay until then'],
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
