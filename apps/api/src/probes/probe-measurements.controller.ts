import { ErrorCode } from '@matchplane/contracts';
import { Body, Post } from '@nestjs/common';
import type { ProbeMeasurementResponse } from '@matchplane/contracts';
import type { AuthenticatedSession } from '@matchplane/players';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { CurrentSession, ReceivedAt } from '../auth/player-auth.guard';
import { ProbeMeasurementRecorder } from './probe-measurement.recorder';
import { ProbeMeasurementBody } from './probe-measurements.dto';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

/** Measurements taken by the regional probe edges, handed over by the player they measured. */
@PlayerController('probes')
export class ProbeMeasurementsController {
  constructor(private readonly recorder: ProbeMeasurementRecorder) {}

  @Post('measurements')
  @Answers({
    summary: "Hand over a measurement a region's probe edge signed (docs/PROBES.md)",
    caller: 'player',
    status: 200,
    body: 'ProbeMeasurementResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.UNKNOWN_REGION,
      ErrorCode.PROBE_BAD_SIGNATURE,
      ErrorCode.PROBE_UNKNOWN_KEY,
      ErrorCode.PROBE_WRONG_PLAYER,
      ErrorCode.PROBE_WRONG_EDGE,
      ErrorCode.PROBE_MEASUREMENT_REPLAYED,
      ErrorCode.PROBE_MEASUREMENT_EXPIRED,
    ],
  })
  // Each costs a transaction: counted with the API-hosted challenges, per session.
  @RateLimit(RateLimitScope.PROBE_CHALLENGE)
  async record(
    @Body() body: ProbeMeasurementBody,
    @CurrentSession() session: AuthenticatedSession,
    @ReceivedAt() receivedAt: Date,
  ): Promise<ProbeMeasurementResponse> {
    const recorded = await this.recorder.record(session.playerId, body, receivedAt);
    return {
      measurementId: body.measurementId,
      region: body.region,
      rttMs: recorded.rttMs,
      estimateMs: recorded.estimateMs,
      samplesMs: recorded.samplesMs,
    };
  }
}
