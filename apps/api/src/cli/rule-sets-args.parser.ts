import { parseArgs } from 'node:util';
import { ACTOR_PATTERN, OPERATOR_CLI_FLAGS } from './dlq.config';

export type RuleSetsOperation =
  | { kind: 'list' }
  | { kind: 'check'; file: string }
  | { kind: 'create'; file: string; reason: string; actor?: string }
  | { kind: 'activate'; version: number; reason: string; actor?: string }
  | { kind: 'rollback'; reason: string; actor?: string };

export type ParsedRuleSetsArgs =
  | { ok: true; help: true }
  | { ok: true; help: false; operation: RuleSetsOperation; json: boolean }
  | { ok: false; problem: string };

export const RULE_SETS_USAGE = `usage: npm run rule-sets -- <command> [flags]
  list                                every version, newest first, and which is active
  check <file>                        what a create of <file> would refuse (a dry run: nothing stored)
  create <file> --reason=R            store <file> as a draft version (not yet active)
  activate <version> --reason=R       make <version> the active one: the API and every matcher
                                      switch to it within RULE_SET_POLL_INTERVAL_MS, no restart
  rollback --reason=R                 back to the version active before the active one
<file>: a JSON object of the rule variables it sets over each app's environment (QUEUE_MODES,
MATCH_WIDENING, MATCH_WIDENING_BY_MODE, QUEUE_MODE_ATTRIBUTES), as \`npm run simulate --proposed\` takes.
flags:
  --json         one JSON object per line instead of text
  --actor=NAME   who is acting, for the audit trail (default OPERATOR_NAME)
  --help         print this text
Connection settings come from the DATABASE_* environment variables; the modes a version must keep
from QUEUE_MODES.`;

/** The rule-sets CLI's arguments; a usage problem names what is wrong (exit 2). */
export function parseRuleSetsArgs(argv: readonly string[]): ParsedRuleSetsArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: OPERATOR_CLI_FLAGS,
    });
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { ok: true, help: true };
  const [command, argument, ...extra] = positionals;
  const json = values.json ?? false;
  const done = (operation: RuleSetsOperation): ParsedRuleSetsArgs => ({
    ok: true,
    help: false,
    operation,
    json,
  });
  if (extra.length > 0) return { ok: false, problem: `unexpected ${extra.join(' ')}` };
  if (command === 'list' && argument === undefined) return done({ kind: 'list' });
  if (command === 'check') {
    if (!argument) return { ok: false, problem: 'check needs the rule set file' };
    return done({ kind: 'check', file: argument });
  }
  if (command !== 'create' && command !== 'activate' && command !== 'rollback') {
    return { ok: false, problem: `unknown command ${JSON.stringify(command ?? '')}` };
  }
  const reason = values.reason?.trim();
  if (!reason) return { ok: false, problem: `${command} needs --reason=R for the audit trail` };
  if (values.actor !== undefined && !ACTOR_PATTERN.test(values.actor)) {
    return { ok: false, problem: '--actor must be 1-100 letters, digits, "_", ".", "@" or "-"' };
  }
  const actor = values.actor === undefined ? {} : { actor: values.actor };
  if (command === 'rollback') {
    if (argument !== undefined) return { ok: false, problem: 'rollback takes no version' };
    return done({ kind: 'rollback', reason, ...actor });
  }
  if (command === 'create') {
    if (!argument) return { ok: false, problem: 'create needs the rule set file' };
    return done({ kind: 'create', file: argument, reason, ...actor });
  }
  if (!argument || !/^[1-9]\d{0,8}$/.test(argument)) {
    return { ok: false, problem: 'activate needs a version (a positive integer)' };
  }
  return done({ kind: 'activate', version: Number(argument), reason, ...actor });
}
