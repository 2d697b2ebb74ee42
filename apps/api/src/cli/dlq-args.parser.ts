import {
  DEAD_LETTER_DEFAULT_LIMIT,
  DEAD_LETTER_MAX_LIMIT,
  isOutboxId,
  type DeadLetterFilter,
} from '@matchplane/outbox';
import { ACTOR_PATTERN } from './dlq.config';

/** What to do; `actor` is only what --actor said (OPERATOR_NAME is the fallback, read with the config). */
export type DlqOperation =
  | { kind: 'list'; filter: DeadLetterFilter; limit?: number; cursor?: string }
  | { kind: 'show'; id: string }
  | { kind: 'replay'; id: string; reason: string; actor?: string }
  | {
      kind: 'replay-matching';
      filter: DeadLetterFilter;
      all: boolean;
      reason: string;
      actor?: string;
    }
  | { kind: 'discard'; id: string; reason: string; actor?: string }
  | { kind: 'stats' };

/** The operations that change something, and so need an actor for the audit trail. */
export type AuditedDlqOperation = Extract<
  DlqOperation,
  { kind: 'replay' | 'replay-matching' | 'discard' }
>;

export function isAudited(operation: DlqOperation): operation is AuditedDlqOperation {
  return (
    operation.kind === 'replay' ||
    operation.kind === 'replay-matching' ||
    operation.kind === 'discard'
  );
}

export type ParsedDlqArgs =
  | { ok: true; help: true }
  | { ok: true; help: false; operation: DlqOperation; json: boolean }
  | { ok: false; problem: string };

export const DLQ_USAGE = `usage: npm run dlq -- <command> [flags]
  list [--event=E] [--aggregate=ID] [--from=ISO] [--to=ISO] [--limit=N] [--cursor=C]
                 dead letters, oldest first (N from 1 to ${DEAD_LETTER_MAX_LIMIT}, default ${DEAD_LETTER_DEFAULT_LIMIT})
  show <id>      one dead letter: envelope, last error, attempt history
  replay <id> --reason=R
                 back to pending with the same event id, after the aggregate's earlier events
  replay (--all | [--event=E] [--aggregate=ID] [--from=ISO] [--to=ISO]) --reason=R
                 every dead letter matching the filter (--all: every dead letter)
  discard <id> --reason=R
                 delete a dead letter; the audit trail keeps its envelope
  stats          pending backlog, dead letters by event, blocked aggregates
flags:
  --json         one JSON object per line instead of a table
  --actor=NAME   who is acting, for the audit trail (replay, discard; default OPERATOR_NAME)
  --help         print this text
--from is inclusive, --to exclusive; both are ISO 8601 with Z or an offset, or a plain date (UTC).
Connection settings come from the DATABASE_* and REDIS_* environment variables.`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INSTANT =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

const FILTER_FLAGS = ['event', 'aggregate', 'from', 'to'] as const;
const VALUE_FLAGS = new Set([
  'event',
  'aggregate',
  'from',
  'to',
  'limit',
  'cursor',
  'reason',
  'actor',
]);
const BOOLEAN_FLAGS = new Set(['all', 'json', 'help']);

/** Which flags each command takes (besides --json and --help). */
const ALLOWED: Record<string, readonly string[]> = {
  list: [...FILTER_FLAGS, 'limit', 'cursor'],
  show: [],
  replay: ['reason', 'actor', 'all', ...FILTER_FLAGS],
  discard: ['reason', 'actor'],
  stats: [],
};

class UsageError extends Error {}

/** Pure: decides everything about the command line before any configuration is read. */
export function parseDlqArgs(argv: readonly string[]): ParsedDlqArgs {
  try {
    return parse(argv);
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, problem: error.message };
    throw error;
  }
}

function parse(argv: readonly string[]): ParsedDlqArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (const arg of argv) {
    if (arg === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const separator = arg.indexOf('=');
    const name = separator === -1 ? arg.slice(2) : arg.slice(2, separator);
    const value = separator === -1 ? undefined : arg.slice(separator + 1);
    if (flags.has(name)) throw new UsageError(`--${name} is given twice`);
    if (BOOLEAN_FLAGS.has(name)) {
      if (value !== undefined) throw new UsageError(`--${name} takes no value (got "${arg}")`);
      flags.set(name, true);
    } else if (VALUE_FLAGS.has(name)) {
      if (value === undefined || value === '')
        throw new UsageError(`--${name} needs a value, as in --${name}=...`);
      flags.set(name, value);
    } else {
      throw new UsageError(`unknown flag "${arg}"`);
    }
  }
  if (flags.has('help')) return { ok: true, help: true };
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError('a command is required');
  const allowed = ALLOWED[command];
  if (!allowed) throw new UsageError(`unknown command "${command}"`);
  for (const name of flags.keys()) {
    if (name !== 'json' && !allowed.includes(name))
      throw new UsageError(`${command} does not take --${name}`);
  }
  const json = flags.has('json');
  const text = (name: string): string | undefined => {
    const value = flags.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const maxPositionals = command === 'list' || command === 'stats' ? 0 : 1;
  if (rest.length > maxPositionals)
    throw new UsageError(`unexpected argument "${rest[maxPositionals]}"`);
  const id = rest[0];
  if (id !== undefined && !isOutboxId(id))
    throw new UsageError(`the id must be a positive whole number (got "${id}")`);
  const actor = text('actor');
  if (actor !== undefined && !ACTOR_PATTERN.test(actor)) {
    throw new UsageError('--actor must be 1-100 letters, digits, "_", ".", "@" or "-"');
  }

  const ok = (operation: DlqOperation): ParsedDlqArgs => ({
    ok: true,
    help: false,
    json,
    operation,
  });
  switch (command) {
    case 'list':
      return ok({
        kind: 'list',
        filter: filterOf(text),
        limit: limitOf(text('limit')),
        cursor: text('cursor'),
      });
    case 'stats':
      return ok({ kind: 'stats' });
    case 'show':
      return ok({ kind: 'show', id: required(id, 'show needs the id of a dead letter') });
    case 'discard': {
      const target = required(id, 'discard needs the id of a dead letter');
      return ok({ kind: 'discard', id: target, reason: reasonOf(text, command), actor });
    }
    case 'replay': {
      const reason = reasonOf(text, command);
      const filter = filterOf(text);
      const all = flags.has('all');
      const filtered = Object.values(filter).some((value) => value !== undefined);
      if (id !== undefined) {
        if (filtered || all)
          throw new UsageError('replay takes an id or a selection (--all, --event, ...), not both');
        return ok({ kind: 'replay', id, reason, actor });
      }
      if (all && filtered)
        throw new UsageError(
          '--all replays every dead letter and cannot be combined with a filter',
        );
      if (!all && !filtered) {
        throw new UsageError(
          'replay needs an id, a filter (--event, --aggregate, --from, --to) or --all',
        );
      }
      return ok({ kind: 'replay-matching', filter, all, reason, actor });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function required(value: string | undefined, problem: string): string {
  if (value === undefined) throw new UsageError(problem);
  return value;
}

function reasonOf(text: (name: string) => string | undefined, command: string): string {
  const reason = text('reason');
  if (reason === undefined || reason.trim() === '')
    throw new UsageError(`${command} needs --reason=... for the audit trail`);
  return reason;
}

function filterOf(text: (name: string) => string | undefined): DeadLetterFilter {
  const aggregateId = text('aggregate');
  if (aggregateId !== undefined && !UUID.test(aggregateId))
    throw new UsageError(`--aggregate must be a UUID (got "${aggregateId}")`);
  const filter: DeadLetterFilter = {
    event: text('event'),
    aggregateId,
    from: instantOf(text('from'), 'from'),
    to: instantOf(text('to'), 'to'),
  };
  if (filter.from && filter.to && filter.from > filter.to)
    throw new UsageError('--from must not be later than --to');
  return filter;
}

function instantOf(value: string | undefined, flag: string): Date | undefined {
  if (value === undefined) return undefined;
  const instant = new Date(value);
  if (!INSTANT.test(value) || Number.isNaN(instant.getTime())) {
    throw new UsageError(
      `--${flag} must be an ISO 8601 instant with Z or an offset, or a plain date (got "${value}")`,
    );
  }
  return instant;
}

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = /^[0-9]{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= DEAD_LETTER_MAX_LIMIT))
    throw new UsageError(
      `--limit must be a whole number from 1 to ${DEAD_LETTER_MAX_LIMIT} (got "${value}")`,
    );
  return limit;
}
