import { ConfigError } from '@matchplane/config';
import type { RetentionOwner } from '@matchplane/persistence';
import { type MaintenanceConfig } from '../maintenance.config';

/**
 * What the maintenance app purges: the policies the owning modules declare (`@RetainsRows()`
 * {@link RetentionOwner}s, libs/persistence retention.ts), each with its window (from
 * MaintenanceConfig), put in the order a round takes them. The owners run the statements; the app
 * only schedules them.
 */

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
  name: string;
  table: string;
  window: WindowVariable;
  /** The index the predicate (and its ORDER BY) is served by; the plan test holds us to it. */
  index: string;
  /** The module that declared the policy, and runs its batches and lag. */
  owner: RetentionOwner;
}

export class RetentionRegistrationError extends Error {
  override name = 'RetentionRegistrationError';
}

/** Every window a policy may run over, in the order the refusals name them. */
const WINDOW_VARIABLES: readonly WindowVariable[] = [
  'RETENTION_OUTBOX_DEAD_LETTERS_SECONDS',
  'RETENTION_OUTBOX_PUBLISHED_SECONDS',
  'RETENTION_IDEMPOTENCY_KEYS_SECONDS',
  'RETENTION_SESSIONS_SECONDS',
  'RETENTION_PROBE_CHALLENGES_SECONDS',
  'RETENTION_PROBE_MEASUREMENTS_SECONDS',
  'RETENTION_MATCHES_SECONDS',
  'RETENTION_TICKETS_SECONDS',
];

/**
 * The owners' policies in the order a round takes them: each after the policies it names in
 * `after` (a ticket a match still lists cannot go before its match; a dead letter leaving its
 * window releases the idempotency keys it held), otherwise in the order the owners were found.
 * Refuses (as the dispatcher does for subscribers) a policy declared twice, an unknown window, a
 * configured window no policy runs over (an owner module not imported), or an order that names a
 * policy nobody declares or goes round in a circle.
 */
export function assembleRetentionPolicies(owners: readonly RetentionOwner[]): RetentionPolicy[] {
  const declared = owners.flatMap((owner) =>
    owner.policies.map((definition) => ({ owner, definition })),
  );
  const problems: string[] = [];
  const byName = new Map<string, (typeof declared)[number]>();
  for (const entry of declared) {
    const { name, window } = entry.definition;
    if (byName.has(name)) problems.push(`policy ${name} is declared twice`);
    byName.set(name, entry);
    if (!(WINDOW_VARIABLES as readonly string[]).includes(window)) {
      problems.push(`policy ${name} names an unknown window ${window}`);
    }
  }
  for (const window of WINDOW_VARIABLES) {
    if (!declared.some(({ definition }) => definition.window === window)) {
      problems.push(`no module declares a policy over ${window}`);
    }
  }
  for (const { definition } of declared) {
    for (const before of definition.after ?? []) {
      if (!byName.has(before)) {
        problems.push(`policy ${definition.name} goes after ${before}, which no module declares`);
      }
    }
  }
  const ordered = problems.length === 0 ? inRoundOrder([...byName.values()], problems) : [];
  if (problems.length > 0)
    throw new RetentionRegistrationError(`retention: ${problems.join('; ')}`);
  return ordered.map(({ owner, definition }) => ({
    name: definition.name,
    table: definition.table,
    window: definition.window as WindowVariable,
    index: definition.index,
    owner,
  }));
}

/** A stable topological order: the first policy (as found) whose predecessors are all placed. */
export function inRoundOrder<T extends { definition: { name: string; after?: readonly string[] } }>(
  entries: readonly T[],
  problems: string[],
): T[] {
  const placed: T[] = [];
  const done = new Set<string>();
  let left = [...entries];
  while (left.length > 0) {
    const next = left.find(({ definition }) =>
      (definition.after ?? []).every((before) => done.has(before)),
    );
    if (!next) {
      const names = left.map(({ definition }) => definition.name).join(', ');
      problems.push(`policies ${names} go after each other`);
      return [];
    }
    placed.push(next);
    done.add(next.definition.name);
    left = left.filter((entry) => entry !== next);
  }
  return placed;
}

/** The cutoff of a policy at `now`: rows older than this are past their window. */
export function cutoffOf(policy: RetentionPolicy, windows: RetentionWindows, now: Date): Date {
  return new Date(now.getTime() - windows[policy.window] * 1_000);
}

/** Problems no single variable's validation can see; empty when the windows are consistent. */
export function retentionWindowProblems(windows: RetentionWindows): string[] {
  const dead = windows.RETENTION_OUTBOX_DEAD_LETTERS_SECONDS;
  const longer = WINDOW_VARIABLES.filter((window) => windows[window] > dead);
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
