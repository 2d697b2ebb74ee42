import { loadConfigOrExit } from '@matchplane/config';
import { actorOrExit, commandOrExit, runOperatorCli } from './cli-context';
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
    : actorOrExit('rule-sets', RULE_SETS_USAGE, operation, config.OPERATOR_NAME);

runOperatorCli(
  'rule-sets',
  config,
  (dataSource) => ruleSetsCliModule(config, dataSource),
  (app) => executeRuleSets(app, operation, actor, json),
);
