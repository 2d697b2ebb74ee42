import { ErrorCode } from '@matchplane/contracts';
import { applyDecorators, Body, Get, Param, Post } from '@nestjs/common';
import { Operator, OperatorController } from '../operator.decorator';
import { QueueControlBody, QueueControlTarget } from './queue-controls.dto';
import {
  QueueControlsAdmin,
  type QueueControlAction,
  type QueueControlView,
} from './queue-controls.admin';
import { Answers } from '../../http/openapi/api-answers.decorator';

/** A pause, drain or resume route: the control in force after it, or why it could not change. */
function QueueControlRoute(action: QueueControlAction, summary: string): MethodDecorator {
  return applyDecorators(
    Post(`:scope/:name/${action}`),
    Answers({
      summary,
      caller: 'operator',
      status: 200,
      body: 'QueueControlView',
      errors: [
        ErrorCode.VALIDATION_FAILED,
        ErrorCode.MALFORMED_JSON,
        ErrorCode.UNKNOWN_MODE,
        ErrorCode.UNKNOWN_REGION,
        ErrorCode.CONFLICT,
      ],
    }),
  );
}

/**
 * Pause, drain and resume a mode or a region (docs/architecture/live-operations.md): a paused
 * one takes no new ticket (409 QUEUE_PAUSED, Retry-After when given) and matches nothing; a
 * draining one takes no new ticket (409 QUEUE_DRAINING) and finishes what it holds.
 */
@OperatorController('queue-controls')
export class QueueControlsController {
  constructor(private readonly controls: QueueControlsAdmin) {}

  @Get()
  @Answers({
    summary: 'Every queue control in force (paused or draining modes and regions)',
    caller: 'operator',
    status: 200,
    body: 'QueueControlList',
  })
  async list(): Promise<{ controls: QueueControlView[] }> {
    return { controls: await this.controls.list() };
  }

  @QueueControlRoute(
    'pause',
    'Pause a mode or region: new tickets are refused, searching ones wait',
  )
  pause(
    @Param() target: QueueControlTarget,
    @Body() body: QueueControlBody,
    @Operator() operator: string,
  ): Promise<QueueControlView> {
    return this.apply('pause', target, body, operator);
  }

  @QueueControlRoute(
    'drain',
    'Drain a mode or region: new tickets are refused, searching ones are still matched',
  )
  drain(
    @Param() target: QueueControlTarget,
    @Body() body: QueueControlBody,
    @Operator() operator: string,
  ): Promise<QueueControlView> {
    return this.apply('drain', target, body, operator);
  }

  @QueueControlRoute('resume', 'Resume a paused or draining mode or region')
  resume(
    @Param() target: QueueControlTarget,
    @Body() body: QueueControlBody,
    @Operator() operator: string,
  ): Promise<QueueControlView> {
    return this.apply('resume', target, body, operator);
  }

  private apply(
    action: QueueControlAction,
    target: QueueControlTarget,
    body: QueueControlBody,
    operator: string,
  ): Promise<QueueControlView> {
    return this.controls.apply(action, target, operator, {
      reason: body.reason,
      ...(body.retryAfterSeconds === undefined
        ? {}
        : { retryAfterSeconds: body.retryAfterSeconds }),
    });
  }
}
