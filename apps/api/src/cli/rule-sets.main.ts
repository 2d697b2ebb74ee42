import { loadConfigOrExit } from '@matchplane/config';
import { exitOnUsageError } from '@matchplane/errors';
import { commandOrExit, runOperatorCli } from './cli-context';
import { RULE_SETS_USAGE, parseRuleSetsArgs } from './rule-sets-args.parser';
import { executeRuleSets, ruleSetsCliModule } from './rule-sets.command';
import { DlqConfig } from './dlq.config';

/** `npm run rule-sets`: rule set versions from a shell, checked and audited like the admin routes. */
const { operation, json } = commandOrExit(
  'rule-sets',
  RULE_SETS_USAGE,
  parseRuleSetsArgs(process.argv.slice(2)),
);
// The operator CLIs share one configuration: the database, Redis and OPERATOR_NAME.
const config = loadConfigOrExit(DlqConfig, 'rule-sets');
// Listing and checking change nothing, so they audit nobody.
const actor =
  operation.kind === 'list' || operation.kind === 'check'
    ? 'nobody'
    : (operation.actor ?? config.OPERATOR_NAME);
if (actor === undefined) {
  exitOnUsageError(
    'rule-sets',
    `${operation.kind} needs --actor=NAME (or OPERATOR_NAME) for the audit trail`,
    RULE_SETS_USAGE,
  );
}

runOperatorCli(
  'rule-sets',
  config,
  (dataSource) => ruleSetsCliModule(config, dataSource),
  (app) => executeRuleSets(app, operation, actor, json),
);
