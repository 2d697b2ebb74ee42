import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProbeMeasurement } from '@matchplane/join-auth';
import { AnswerRequestBody, ChallengeRequestBody } from './probe-edge.dto';
import { ProbeEdge } from './probe-edge.service';

/** Set by the edge's onRequest hook: the answer's receive time, before body parsing. */
export interface TimedRequest extends FastifyRequest {
  receivedAtUs?: number;
}

@Controller('v1/probe')
export class ProbeEdgeController {
  constructor(private readonly edge: ProbeEdge) {}

  /**
   * Written by hand rather than returned: the issue time is stamped and signed as the last step
   * before the bytes go to the socket, so serialisation and interceptors are not in the RTT.
   */
  @Post('challenges')
  challenge(@Body() body: ChallengeRequestBody, @Res() reply: FastifyReply): void {
    const challenge = this.edge.issue(body.playerId, body.region);
    void reply
      .status(201)
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(challenge));
  }

  @Post('answers')
  @HttpCode(200)
  answer(@Body() body: AnswerRequestBody, @Req() request: TimedRequest): ProbeMeasurement {
    return this.edge.answer(body, request.receivedAtUs ?? Number.MAX_SAFE_INTEGER);
  }
}

/** Liveness and readiness are the same for a stateless process: it answers. */
@Controller()
export class EdgeHealthController {
  constructor(private readonly edge: ProbeEdge) {}

  @Get(['live', 'health'])
  live(): { status: 'ok'; region: string } {
    return { status: 'ok', region: this.edge.region };
  }
}
