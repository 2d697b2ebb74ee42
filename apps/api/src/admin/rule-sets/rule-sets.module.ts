import { Module } from '@nestjs/common';
import { AuditModule } from '@matchplane/persistence';
import { RuleSetsAdmin } from './rule-sets.admin';

/**
 * The operator's versions of the rules, for the admin routes and the CLI; the store and the active
 * rule set come from the app's RuleSetsModule (global).
 */
@Module({ imports: [AuditModule], providers: [RuleSetsAdmin], exports: [RuleSetsAdmin] })
export class RuleSetsAdminModule {}
