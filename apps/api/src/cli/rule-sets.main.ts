import { loadConfigOrExit } from '@matchplane/config';
import { CliExitCode, exitOnUsageError } from '@matchplane/errors';
import { runOperatorCli } from './cli-context';
import { RULE_SETS_USAGE, parseRuleSetsArgs } from './rule-sets-args.parser';
import { executeRuleSets, ruleSetsCliModule } from './rule-sets.command';
import { DlqConfig } from './dlq.config';

/** `npm run rule-sets`: rule set versions from a shell, checked and audited like the admin routes. */
function usageError(problem: string): never {
  exitOnUsageError('rule-sets', problem, RULE_SETS_USAGE);
}

const parsed = parseRuleSetsArgs(process.argv.slice(2));
if (!parsed.ok) usageError(parsed.problem);
if (parsed.help) {
  process.stdout.write(`${RULE_SETS_USAGE}\n`);
  process.exit(CliExitCode.OK);
}
// The operator CLIs share one configuration: the database, Redis and OPERATOR_NAME.
const config = loadConfigOrExit(DlqConfig, 'rule-sets');
const { operation, json } = parsed;
// Listing and checking change nothing, so they audit nobody.
const actor =
  operation.kind === 'list' || operation.kind === 'check'
    ? 'nobody'
    : (operation.actor ?? config.OPERATOR_NAME);
if (actor === undefined) {
  usageError(`${operation.kind} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`);
}

runOperatorCli(
  'rule-sets',
  config,
  (dataSource) => ruleSetsCliModule(config, dataSource),
  (app) => executeRuleSets(app, operation, actor, json),
);
