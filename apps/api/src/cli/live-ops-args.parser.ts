import { parseArgs } from 'node:util';
import { ACTOR_PATTERN, OPERATOR_CLI_FLAGS } from './dlq.config';
import type { QueueControlAction } from '../admin/live-ops/queue-controls.admin';

export type LiveOpsOperation =
  | { kind: 'list' }
  | { kind: 'cancel-match'; matchId: string; reason: string; actor?: string }
  | { kind: 'release-tickets'; playerId: string; reason: string; actor?: string }
  | {
      kind: QueueControlAction;
      scope: 'mode' | 'region';
      name: string;
      reason: string;
      retryAfterSeconds?: number;
      actor?: string;
    };

export type ParsedLiveOpsArgs =
  | { ok: true; help: true }
  | { ok: true; help: false; operation: LiveOpsOperation; json: boolean }
  | { ok: false; problem: string };

export const LIVE_OPS_USAGE = `usage: npm run live-ops -- <command> [flags]
  list                                     every held mode and region
  pause  (mode|region) <name> --reason=R [--retry-after=S]
                 no new ticket (409 QUEUE_PAUSED, Retry-After S), nothing matched there
  drain  (mode|region) <name> --reason=R   no new ticket (409 QUEUE_DRAINING); what is queued or
                                           matched finishes
  resume (mode|region) <name> --reason=R   open again
  cancel-match <match id> --reason=R       CANCELLED OPERATOR_CANCELLED: players not yet in the game
                                           search again, the others keep their place for later
  release-tickets <player id> --reason=R   end the player's live ticket (OPERATOR_RELEASED)
flags:
  --json         one JSON object per line instead of text
  --actor=NAME   who is acting, for the audit trail (default OPERATOR_NAME)
  --help         print this text
Connection settings come from the DATABASE_* and REDIS_* environment variables; the modes and
regions from QUEUE_MODES and PROBE_REGIONS.`;

const ACTIONS: readonly QueueControlAction[] = ['pause', 'drain', 'resume'];

/** The live-ops CLI's arguments; a usage problem names what is wrong (exit 2). */
export function parseLiveOpsArgs(argv: readonly string[]): ParsedLiveOpsArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { ...OPERATOR_CLI_FLAGS, 'retry-after': { type: 'string' } },
    });
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { ok: true, help: true };
  const [command, scope, name, ...extra] = positionals;
  const json = values.json ?? false;
  if (command === 'list' && scope === undefined) {
    return { ok: true, help: false, operation: { kind: 'list' }, json };
  }
  if (command === 'cancel-match' || command === 'release-tickets') {
    return targetedOperation(command, scope, name, values, json);
  }
  const action = ACTIONS.find((known) => known === command);
  if (!action) return { ok: false, problem: `unknown command ${JSON.stringify(command ?? '')}` };
  if (scope !== 'mode' && scope !== 'region') {
    return { ok: false, problem: `${action} needs "mode" or "region", then its name` };
  }
  if (!name || extra.length > 0) return { ok: false, problem: `${action} ${scope} needs one name` };
  const reason = values.reason?.trim();
  if (!reason) return { ok: false, problem: `${action} needs --reason=R for the audit trail` };
  if (values.actor !== undefined && !ACTOR_PATTERN.test(values.actor)) {
    return { ok: false, problem: '--actor must be 1-100 letters, digits, "_", ".", "@" or "-"' };
  }
  let retryAfterSeconds: number | undefined;
  if (values['retry-after'] !== undefined) {
    if (action !== 'pause') return { ok: false, problem: '--retry-after goes with pause only' };
    retryAfterSeconds = Number(values['retry-after']);
    if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 1) {
      return { ok: false, problem: '--retry-after must be a whole number of seconds, at least 1' };
    }
  }
  return {
    ok: true,
    help: false,
    json,
    operation: {
      kind: action,
      scope,
      name,
      reason,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      ...(values.actor === undefined ? {} : { actor: values.actor }),
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** cancel-match <match id> and release-tickets <player id>: one id, a reason, an actor. */
function targetedOperation(
  command: 'cancel-match' | 'release-tickets',
  id: string | undefined,
  extra: string | undefined,
  values: { reason?: string; actor?: string; 'retry-after'?: string },
  json: boolean,
): ParsedLiveOpsArgs {
  const what = command === 'cancel-match' ? 'match id' : 'player id';
  if (!id || extra !== undefined || !UUID.test(id)) {
    return { ok: false, problem: `${command} needs one ${what} (a UUID)` };
  }
  const reason = values.reason?.trim();
  if (!reason) return { ok: false, problem: `${command} needs --reason=R for the audit trail` };
  if (values['retry-after'] !== undefined) {
    return { ok: false, problem: '--retry-after goes with pause only' };
  }
  if (values.actor !== undefined && !ACTOR_PATTERN.test(values.actor)) {
    return { ok: false, problem: '--actor must be 1-100 letters, digits, "_", ".", "@" or "-"' };
  }
  const actor = values.actor === undefined ? {} : { actor: values.actor };
  const operation: LiveOpsOperation =
    command === 'cancel-match'
      ? { kind: command, matchId: id.toLowerCase(), reason, ...actor }
      : { kind: command, playerId: id.toLowerCase(), reason, ...actor };
  return { ok: true, help: false, json, operation };
}
