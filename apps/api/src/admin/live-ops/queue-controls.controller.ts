import { ErrorCode } from '@matchplane/contracts';
import { Body, Get, Param, Post } from '@nestjs/common';
import { Operator, OperatorController } from '../operator.decorator';
import { QueueControlBody, QueueControlTarget } from './queue-controls.dto';
import {
  QueueControlsAdmin,
  type QueueControlAction,
  type QueueControlView,
} from './queue-controls.admin';
import { Answers } from '../../http/openapi/api-answers.decorator';

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

  @Post(':scope/:name/pause')
  @Answers({
    summary: 'Pause a mode or region: new tickets are refused, searching ones wait',
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
  })
  pause(
    @Param() target: QueueControlTarget,
    @Body() body: QueueControlBody,
    @Operator() operator: string,
  ): Promise<QueueControlView> {
    return this.apply('pause', target, body, operator);
  }

  @Post(':scope/:name/drain')
  @Answers({
    summary: 'Drain a mode or region: new tickets are refused, searching ones are still matched',
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
  })
  drain(
    @Param() target: QueueControlTarget,
    @Body() body: QueueControlBody,
    @Operator() operator: string,
  ): Promise<QueueControlView> {
    return this.apply('drain', target, body, operator);
  }

  @Post(':scope/:name/resume')
  @Answers({
    summary: 'Resume a paused or draining mode or region',
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
  })
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
