import { applyDecorators, HttpCode } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ErrorCode } from '@matchplane/contracts';
import { HTTP_ANSWERS } from '../http-answers';
import type { CONTRACT_SCHEMAS } from './contract-schemas';
import { ref } from './schema-builders';

/** Who may call a route: decides the refusals every route of that kind can answer. */
export type Caller = 'player' | 'server' | 'operator' | 'public';

export interface AnswersSpec {
  readonly summary: string;
  readonly description?: string;
  readonly caller: Caller;
  /** The success status; it is also the route's @HttpCode, so the two cannot disagree. */
  readonly status: 200 | 201 | 204;
  /** The success body: a name in CONTRACT_SCHEMAS (none for 204). */
  readonly body?: keyof typeof CONTRACT_SCHEMAS;
  /** Another success status the route answers with the same body (e.g. 200 for a replay). */
  readonly alsoStatus?: { status: 200 | 201; description: string };
  /** The coded refusals specific to this route (the caller's and the common ones are added). */
  readonly errors?: readonly ErrorCode[];
}

/** What any route can answer: a client going too fast, contention, an outage, a bug. */
const COMMON_ERRORS: readonly ErrorCode[] = [
  ErrorCode.RATE_LIMITED,
  ErrorCode.CONTENDED,
  ErrorCode.DEPENDENCY_UNAVAILABLE,
  ErrorCode.INTERNAL,
];

const CALLER_ERRORS: Record<Caller, readonly ErrorCode[]> = {
  player: [ErrorCode.UNAUTHENTICATED],
  server: [ErrorCode.UNAUTHENTICATED, ErrorCode.FORBIDDEN],
  operator: [ErrorCode.UNAUTHENTICATED, ErrorCode.FORBIDDEN, ErrorCode.NOT_CONFIGURED],
  public: [],
};

/** The problem codes a route answers, grouped by their status in the one status table. */
export function problemsByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = HTTP_ANSWERS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/**
 * One route's contract in the OpenAPI document: summary, success status and body, and every
 * problem+json refusal by status with the codes it may carry (`x-problem-codes`). Applies
 * @HttpCode(status) too: the documented status is the answered one by construction.
 */
export function Answers(spec: AnswersSpec): MethodDecorator {
  const success = spec.body ? { schema: ref(spec.body) } : {};
  const decorators = [
    ApiOperation({
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
    }),
    HttpCode(spec.status),
    ApiResponse({ status: spec.status, description: spec.summary, ...success }),
  ];
  if (spec.alsoStatus) {
    decorators.push(
      ApiResponse({
        status: spec.alsoStatus.status,
        description: spec.alsoStatus.description,
        ...success,
      }),
    );
  }
  const codes = [...(spec.errors ?? []), ...CALLER_ERRORS[spec.caller], ...COMMON_ERRORS];
  for (const [status, statusCodes] of problemsByStatus(codes)) {
    decorators.push(
      ApiResponse({
        status,
        description: statusCodes.join(', '),
        // serveOpenApi turns this list into `x-problem-codes` and the media type problem+json.
        schema: ref('Problem'),
      }),
    );
  }
  return applyDecorators(...decorators);
}
