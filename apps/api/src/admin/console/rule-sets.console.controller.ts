import { Body, Get, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { Operator } from '../operator.decorator';
import { OperatorReasonBody } from '../live-ops/queue-controls.dto';
import { RuleSetsAdmin, type RuleSetCheck, type RuleSetView } from '../rule-sets/rule-sets.admin';
import { versionOf } from '../rule-sets/rule-sets.controller';
import { presentFields, validatedForm } from './console-form';
import { CONSOLE_PATH, type ConsoleSession } from './console-session';
import { ConsolePages } from './console-pages.decorator';
import { ConsoleNotice, CurrentConsoleSession } from './console.guard';
import { seeOther, sendPage } from './console.layout';
import { ruleSetsPage } from './rule-sets.page';

/** The console's rule sets (CSRF-checked forms): check, create, activate, roll back. */
@ConsolePages()
export class RuleSetsConsoleController {
  constructor(private readonly ruleSets: RuleSetsAdmin) {}

  @Get('rule-sets')
  async page(
    @CurrentConsoleSession() session: ConsoleSession,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { ruleSets } = await this.ruleSets.list();
    sendPage(reply, ruleSetsPage({ session, ruleSets, ...(notice ? { notice } : {}) }));
  }

  /** Check (the dry run: the page again, with the problems and the draft kept) or create. */
  @Post('rule-sets')
  async create(
    @CurrentConsoleSession() session: ConsoleSession,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const fields = presentFields(body, ['action', 'rules', 'reason']);
    if (fields.action !== 'check' && fields.action !== 'create') {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'action must be check or create');
    }
    const { reason } = await validatedForm(OperatorReasonBody, { reason: fields.reason });
    let rules: unknown;
    try {
      rules = JSON.parse(fields.rules ?? '');
    } catch {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'rules must be a JSON object', {
        errors: [{ field: 'rules', problems: ['must be a JSON object'] }],
      });
    }
    const dryRun = fields.action === 'check';
    const answer = await this.ruleSets.create(rules, operator, reason, dryRun);
    if (!dryRun) {
      const created = answer as RuleSetView;
      seeOther(reply, `${CONSOLE_PATH}/rule-sets`, `Version ${created.version} created (draft)`);
      return;
    }
    const check = answer as RuleSetCheck;
    const notice = check.valid
      ? 'No problems'
      : check.problems.map(({ field, problem }) => `${field}: ${problem}`).join('; ');
    const { ruleSets } = await this.ruleSets.list();
    sendPage(
      reply,
      ruleSetsPage({
        session,
        ruleSets,
        draft: fields.rules ?? '',
        notice: notice.slice(0, 600),
      }),
    );
  }

  @Post('rule-sets/rollback')
  async rollback(
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { reason } = await validatedForm(OperatorReasonBody, presentFields(body, ['reason']));
    const active = await this.ruleSets.rollback(operator, reason);
    seeOther(reply, `${CONSOLE_PATH}/rule-sets`, `Rolled back: version ${active.version} active`);
  }

  @Post('rule-sets/:version/activate')
  async activate(
    @Param('version') version: string,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { reason } = await validatedForm(OperatorReasonBody, presentFields(body, ['reason']));
    const active = await this.ruleSets.activate(versionOf(version), operator, reason);
    seeOther(reply, `${CONSOLE_PATH}/rule-sets`, `Version ${active.version} active`);
  }
}
