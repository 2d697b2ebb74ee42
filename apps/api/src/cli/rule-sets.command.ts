import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { PersistenceModule } from '@matchplane/persistence';
import { RuleSetsModule } from '@matchplane/rule-sets';
import {
  RuleSetsAdmin,
  type RuleSetCheck,
  type RuleSetView,
} from '../admin/rule-sets/rule-sets.admin';
import { RuleSetsAdminModule } from '../admin/rule-sets/rule-sets.module';
import type { RuleSetsOperation } from './rule-sets-args.parser';
import type { DlqConfig } from './dlq.config';

/** The CLI's root: the operator's rule set service on its own DataSource, checked as the API checks. */
export function ruleSetsCliModule(config: DlqConfig, dataSource: DataSource): DynamicModule {
  return {
    module: class RuleSetsCli {},
    imports: [
      PersistenceModule.forDataSource(dataSource),
      RuleSetsModule.forRoot({
        base: {
          QUEUE_MODES: config.QUEUE_MODES,
          QUEUE_MODE_ATTRIBUTES: config.QUEUE_MODE_ATTRIBUTES,
        },
        pollIntervalMs: config.RULE_SET_POLL_INTERVAL_MS,
      }),
      RuleSetsAdminModule,
    ],
  };
}

/** A rule set file's JSON; 400 VALIDATION_FAILED (exit code of bad input) when it is none. */
function readRules(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CodedError(ErrorCode.VALIDATION_FAILED, `${file}: ${(error as Error).message}`);
  }
}

/** Runs one operation; answers the lines to print (JSON lines with `json`). */
export async function executeRuleSets(
  app: INestApplicationContext,
  operation: RuleSetsOperation,
  actor: string,
  json: boolean,
): Promise<string[]> {
  const admin = app.get(RuleSetsAdmin);
  const show = (view: RuleSetView) => (json ? JSON.stringify(view) : describe(view));
  switch (operation.kind) {
    case 'list':
      return (await admin.list()).ruleSets.map(show);
    case 'check': {
      const check = (await admin.create(
        readRules(operation.file),
        actor,
        '',
        true,
      )) as RuleSetCheck;
      // Problems fail the command (exit 1), so a script or CI step can gate on a check.
      if (!check.valid) {
        const problems = check.problems.map(({ problem }) => problem).join('; ');
        throw new CodedError(ErrorCode.VALIDATION_FAILED, `${operation.file}: ${problems}`);
      }
      return [json ? JSON.stringify(check) : `${operation.file}: no problems`];
    }
    case 'create': {
      const rules = readRules(operation.file);
      return [show((await admin.create(rules, actor, operation.reason, false)) as RuleSetView)];
    }
    case 'activate':
      return [show(await admin.activate(operation.version, actor, operation.reason))];
    case 'rollback':
      return [show(await admin.rollback(actor, operation.reason))];
  }
}

function describe(view: RuleSetView): string {
  const rules = Object.keys(view.rules).join(', ') || 'the environment';
  return `version ${view.version} ${view.status} (${rules}) by ${view.createdBy} at ${view.createdAt}: ${view.reason}`;
}
