import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { ProbeChallenge } from '@matchplane/join-auth';
import { EdgeProblemFilter } from './edge-problem.filter';
import { ProbeEdge } from './probe-edge.service';

/** Set by the edge's onRequest hook: the answer's receive time, before the body is read. */
export interface TimedRequest extends FastifyRequest {
  receivedAtUs?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REGION = /^[a-z0-9_-]{1,64}$/;
const CHALLENGE_FIELDS = [
  'nonce',
  'playerId',
  'region',
  'edgeId',
  'issuedAtUs',
  'keyId',
  'signature',
];

/**
 * The edge's two probe routes as plain Fastify routes inside the Nest app (DI, lifecycle, health
 * and the problem filter stay Nest's). Decision: Nest's per-request pipeline (router, pipes,
 * class-validator) cut the edge to a fraction of a bare server's rate while its /live ran near it;
 * these bodies are three fields, checked by hand below, each refusal naming its field.
 */
@Injectable()
export class ProbeEdgeRoutes implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly edge: ProbeEdge,
    private readonly problems: EdgeProblemFilter,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const errorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply) =>
      this.problems.send(error, request, reply);
    fastify.post('/v1/probe/challenges', { errorHandler }, (request, reply) => {
      const body = objectBody(request.body, ['playerId', 'region']);
      const playerId = field(body, 'playerId', UUID, 'a lowercase UUID (the session’s player id)');
      const region = field(body, 'region', REGION, 'a region name, e.g. eu-west');
      // Stamped and signed as the last step before the bytes are handed to the socket.
      const challenge = this.edge.issue(playerId, region);
      void reply
        .status(201)
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(challenge));
    });
    fastify.post('/v1/probe/answers', { errorHandler }, (request: TimedRequest, reply) => {
      const body = objectBody(request.body, ['playerId', 'region', 'challenge']);
      const playerId = field(body, 'playerId', UUID, 'a lowercase UUID (the session’s player id)');
      const region = field(body, 'region', REGION, 'a region name, e.g. eu-west');
      const challenge = echoedChallenge(body.challenge);
      const measurement = this.edge.answer(
        { playerId, region, challenge },
        request.receivedAtUs ?? Number.MAX_SAFE_INTEGER,
      );
      void reply.status(200).send(measurement);
    });
  }
}

function invalid(message: string): CodedError {
  return new CodedError(ErrorCode.VALIDATION_FAILED, message);
}

/** A JSON object with exactly the allowed fields (an unknown one is refused, not ignored). */
function objectBody(value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`the body must be a JSON object with ${allowed.join(', ')}`);
  }
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw invalid(`property ${unknown[0]} should not exist`);
  return value as Record<string, unknown>;
}

function field(body: Record<string, unknown>, name: string, shape: RegExp, what: string): string {
  const value = body[name];
  if (typeof value !== 'string' || !shape.test(value)) throw invalid(`${name} must be ${what}`);
  return value;
}

/** The challenge's JSON shape; its bytes and MAC are checked by the edge. */
function echoedChallenge(value: unknown): ProbeChallenge {
  const challenge = objectBody(value, CHALLENGE_FIELDS);
  for (const name of CHALLENGE_FIELDS) {
    const ok =
      name === 'issuedAtUs'
        ? Number.isSafeInteger(challenge[name])
        : typeof challenge[name] === 'string';
    if (!ok)
      throw invalid(
        `challenge.${name} is missing or of the wrong type: echo the challenge unchanged`,
      );
  }
  return challenge as unknown as ProbeChallenge;
}
