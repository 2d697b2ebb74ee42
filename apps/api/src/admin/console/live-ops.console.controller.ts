import { Body, Get, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { Operator } from '../operator.decorator';
import {
  OperatorReasonBody,
  QueueControlBody,
  QueueControlTarget,
} from '../live-ops/queue-controls.dto';
import { MatchControlsAdmin } from '../live-ops/match-controls.admin';
import { UuidParamPipe } from '../../http/uuid-input';
import {
  LiveOpsScopes,
  QueueControlsAdmin,
  type QueueControlAction,
  type QueueControlView,
} from '../live-ops/queue-controls.admin';
import { presentFields, validatedForm } from './console-form';
import { CONSOLE_PATH, type ConsoleSession } from './console-session';
import { ConsolePages } from './console-pages.decorator';
import { ConsoleNotice, CurrentConsoleSession } from './console.guard';
import { seeOther, sendPage } from './console.layout';
import { liveOpsPage } from './live-ops.page';

const ACTIONS: readonly QueueControlAction[] = ['pause', 'drain', 'resume'];

/**
 * The console's live operations (CSRF-checked forms): queue holds on modes and regions, and the
 * cancel form of a live match's page.
 */
@ConsolePages()
export class LiveOpsConsoleController {
  constructor(
    private readonly controls: QueueControlsAdmin,
    private readonly scopes: LiveOpsScopes,
    private readonly matches: MatchControlsAdmin,
  ) {}

  @Get('live-ops')
  async page(
    @CurrentConsoleSession() session: ConsoleSession,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const held = new Map((await this.controls.list()).map((c) => [`${c.scope}/${c.name}`, c]));
    const open = (scope: 'mode' | 'region', name: string): QueueControlView =>
      held.get(`${scope}/${name}`) ?? { scope, name, state: 'OPEN' };
    const targets = [
      ...this.scopes.modes.map((name) => open('mode', name)),
      ...this.scopes.regions.map((name) => open('region', name)),
    ];
    sendPage(reply, liveOpsPage({ session, targets, ...(notice ? { notice } : {}) }));
  }

  @Post('matches/:id/cancel')
  async cancelMatch(
    @Param('id', new UuidParamPipe('match id')) matchId: string,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { reason } = await validatedForm(OperatorReasonBody, presentFields(body, ['reason']));
    const cancelled = await this.matches.cancelMatch(matchId, operator, reason);
    const notice = `Cancelled: ${cancelled.requeued.length} player(s) searching again, ${cancelled.released.length} let go`;
    seeOther(reply, `${CONSOLE_PATH}/matches/${matchId}`, notice);
  }

  @Post('live-ops/:scope/:name')
  async change(
    @Param() params: unknown,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const target = await validatedForm(
      QueueControlTarget,
      presentFields(params, ['scope', 'name']),
    );
    const fields = presentFields(body, ['action', 'reason', 'retryAfterSeconds']);
    const action = ACTIONS.find((known) => known === fields.action);
    if (!action) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'action must be pause, drain or resume');
    }
    const form = await validatedForm(QueueControlBody, {
      reason: fields.reason,
      retryAfterSeconds: fields.retryAfterSeconds,
    });
    const done = await this.controls.apply(action, target, operator, {
      reason: form.reason,
      ...(form.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: form.retryAfterSeconds }),
    });
    const notice = `${target.scope} ${target.name}: ${done.state}`;
    seeOther(reply, `${CONSOLE_PATH}/live-ops`, notice);
  }
}
