import { Body, Inject, Optional, Param, Post } from '@nestjs/common';
import {
  ErrorCode,
  type ProbeAnswerResponse,
  type ProbeChallengeResponse,
} from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { AuthenticatedSession } from '@matchplane/players';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { CurrentSession, ReceivedAt } from '../auth/player-auth.guard';
import { QueuePolicy } from '../queue/queue-policy';
import { ProbeAnswerBody } from './probes.dto';
import { ProbeRecorder } from './probe.recorder';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

@PlayerController('probes')
export class ProbesController {
  constructor(
    private readonly policy: QueuePolicy,
    @Optional() @Inject(ProbeRecorder) private readonly recorder?: ProbeRecorder,
  ) {}

  @Post(':region/challenge')
  @Answers({
    summary: 'Start an API-hosted latency probe of a region (answer it at once)',
    caller: 'player',
    status: 201,
    body: 'ProbeChallengeResponse',
    errors: [ErrorCode.UNKNOWN_REGION, ErrorCode.NOT_CONFIGURED],
  })
  @RateLimit(RateLimitScope.PROBE_CHALLENGE)
  async challenge(
    @Param('region') region: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<ProbeChallengeResponse> {
    const recorder = this.requireRecorder();
    const issued = await recorder.issue(session.playerId, this.policy.region(region), new Date());
    return {
      challengeId: issued.challengeId,
      region,
      nonce: issued.nonce,
      issuedAt: issued.issuedAt.toISOString(),
      expiresAt: issued.expiresAt.toISOString(),
    };
  }

  @Post(':region/answer')
  @Answers({
    summary: "Answer a probe challenge: the server measures this player's RTT to the region",
    caller: 'player',
    status: 200,
    body: 'ProbeAnswerResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.MALFORMED_JSON,
      ErrorCode.UNKNOWN_REGION,
      ErrorCode.NOT_CONFIGURED,
      ErrorCode.PROBE_CHALLENGE_NOT_FOUND,
      ErrorCode.PROBE_NONCE_MISMATCH,
      ErrorCode.PROBE_WRONG_PLAYER,
      ErrorCode.PROBE_WRONG_REGION,
      ErrorCode.PROBE_ALREADY_ANSWERED,
      ErrorCode.PROBE_EXPIRED,
    ],
  })
  async answer(
    @Param('region') region: string,
    @Body() body: ProbeAnswerBody,
    @CurrentSession() session: AuthenticatedSession,
    @ReceivedAt() receivedAt: Date,
  ): Promise<ProbeAnswerResponse> {
    const recorder = this.requireRecorder();
    this.policy.region(region);
    const recorded = await recorder.answer(session.playerId, region, body, receivedAt);
    return {
      region,
      rttMs: recorded.rttMs,
      estimateMs: recorded.estimateMs,
      samplesMs: recorded.samplesMs,
    };
  }

  private requireRecorder(): ProbeRecorder {
    if (!this.recorder) {
      throw new CodedError(
        ErrorCode.NOT_CONFIGURED,
        'No probe recorder is configured; latency cannot be measured',
      );
    }
    return this.recorder;
  }
}
