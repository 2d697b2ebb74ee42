import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { OperatorRequest } from './operator.guard';

/** The operator {@link OperatorGuard} authenticated: the actor of the audit trail. */
export const Operator = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string => {
    const { operator } = context.switchToHttp().getRequest<OperatorRequest>();
    // Only reachable on a route that forgot the guard: fail loudly rather than audit nobody.
    if (!operator) throw new Error('@Operator() used on a route that is not behind OperatorGuard');
    return operator;
  },
);
