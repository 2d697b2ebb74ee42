import { ErrorCode } from '@matchplane/contracts';
import { Body, Get, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import { CodedError } from '@matchplane/errors';
import { IsOptionalNonNull } from '../../http/is-optional-non-null.decorator';
import { Answers } from '../../http/openapi/api-answers.decorator';
import { OperatorReasonBody } from '../live-ops/queue-controls.dto';
import { Operator, OperatorController } from '../operator.decorator';
import {
  RuleSetsAdmin,
  type RuleSetCheck,
  type RuleSetList,
  type RuleSetView,
} from './rule-sets.admin';

export class CreateRuleSetBody extends OperatorReasonBody {
  @ApiProperty({
    description:
      'The rule variables this version sets over each app\'s environment: any of QUEUE_MODES, MATCH_WIDENING, MATCH_WIDENING_BY_MODE (strings) and QUEUE_MODE_ATTRIBUTES (an object or its JSON), as the variables take them; e.g. {"MATCH_WIDENING": "0:80:150,10000:150:300"}',
    type: 'object',
    additionalProperties: true,
  })
  @IsObject({ message: 'rules must be a JSON object of rule variables' })
  rules!: Record<string, unknown>;
}

export class CreateRuleSetQuery {
  @ApiPropertyOptional({
    description: 'true: check the rules and answer the problems (200), storing nothing',
    enum: ['true', 'false'],
  })
  @IsOptionalNonNull()
  @IsIn(['true', 'false'], { message: 'dryRun must be true or false' })
  dryRun?: 'true' | 'false';
}

/** A version path parameter: a positive integer, else 400 (never a database error). */
export function versionOf(raw: string): number {
  const version = /^[1-9]\d{0,8}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isInteger(version)) return version;
  const problem = 'version must be a positive integer rule set version';
  throw new CodedError(ErrorCode.VALIDATION_FAILED, `${problem} (got "${raw.slice(0, 40)}")`, {
    errors: [{ field: 'version', problems: [problem] }],
  });
}

/**
 * Rule sets as versioned data (docs/architecture/rule-sets.md): list, create (or dry-run),
 * activate and roll back; the API and every matcher follow the active version without a restart.
 */
@OperatorController('rule-sets')
export class RuleSetsController {
  constructor(private readonly ruleSets: RuleSetsAdmin) {}

  @Get()
  @Answers({
    summary: 'Every rule set version, newest first, and the active one',
    caller: 'operator',
    status: 200,
    body: 'RuleSetList',
  })
  list(): Promise<RuleSetList> {
    return this.ruleSets.list();
  }

  @Post()
  @Answers({
    summary: 'Create a draft rule set version (checked as the apps would run it; audited)',
    description:
      'With dryRun=true the rules are only checked: 200 with `valid` and every problem, nothing stored. Otherwise a rule set with problems is 400 VALIDATION_FAILED naming each variable (`rules.<VARIABLE>`).',
    caller: 'operator',
    status: 201,
    body: 'RuleSetView',
    alsoStatus: { status: 200, description: 'dryRun=true: the check (valid, problems, rules)' },
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON],
  })
  async create(
    @Body() body: CreateRuleSetBody,
    @Query() query: CreateRuleSetQuery,
    @Operator() operator: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RuleSetView | RuleSetCheck> {
    const dryRun = query.dryRun === 'true';
    const answer = await this.ruleSets.create(body.rules, operator, body.reason, dryRun);
    if (dryRun) void reply.status(200);
    return answer;
  }

  @Post(':version/activate')
  @Answers({
    summary: 'Activate a rule set version: the API and every matcher switch to it (audited)',
    caller: 'operator',
    status: 200,
    body: 'RuleSetView',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.NOT_FOUND,
      ErrorCode.CONFLICT,
    ],
  })
  activate(
    @Param('version') version: string,
    @Body() body: OperatorReasonBody,
    @Operator() operator: string,
  ): Promise<RuleSetView> {
    return this.ruleSets.activate(versionOf(version), operator, body.reason);
  }

  @Post('rollback')
  @Answers({
    summary: 'Roll back to the rule set version active before the active one (audited)',
    caller: 'operator',
    status: 200,
    body: 'RuleSetView',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.MALFORMED_JSON, ErrorCode.CONFLICT],
  })
  rollback(@Body() body: OperatorReasonBody, @Operator() operator: string): Promise<RuleSetView> {
    return this.ruleSets.rollback(operator, body.reason);
  }
}
