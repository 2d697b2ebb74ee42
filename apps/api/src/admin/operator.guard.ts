import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiConfig } from '../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

export interface OperatorRequest extends FastifyRequest {
  operator?: string;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Parses OPERATOR_TOKENS ("name=token,name=token") into token digests by operator name. */
export function parseOperatorTokens(raw: string | undefined): Map<string, Buffer> {
  const operators = new Map<string, Buffer>();
  for (const pair of (raw ?? '').split(',').filter(Boolean)) {
    const separator = pair.indexOf('=');
    operators.set(pair.slice(0, separator), digest(pair.slice(separator + 1)));
  }
  return operators;
}

/**
 * Admin routes: `Authorization: Bearer <operator token>`. No credential is a 401, a wrong one a
 * 403; with no operator configured at all, a 503 (never an open admin API). The operator's name
 * is recorded on the request for the audit trail.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly operators: Map<string, Buffer>;

  constructor(@Inject(ApiConfig) config: ApiConfig) {
    this.operators = parseOperatorTokens(config.OPERATOR_TOKENS);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<OperatorRequest>();
    if (this.operators.size === 0) {
      throw new CodedError(
        ErrorCode.NOT_CONFIGURED,
        'No operator tokens are configured (OPERATOR_TOKENS)',
      );
    }
    const header = request.headers.authorization;
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (!match?.[1]) {
      throw new CodedError(ErrorCode.UNAUTHENTICATED, 'An operator bearer token is required', {
        challenge: 'Bearer realm="matchplane-admin"',
      });
    }
    const presented = digest(match[1]);
    for (const [name, expected] of this.operators) {
      if (timingSafeEqual(presented, expected)) {
        request.operator = name;
        return true;
      }
    }
    throw new CodedError(ErrorCode.FORBIDDEN, 'The operator token is not valid');
  }
}
