import {
  applyDecorators,
  Controller,
  createParamDecorator,
  UseGuards,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { OperatorGuard, type OperatorRequest } from './operator.guard';

/**
 * A controller of operator routes under /v1/admin/<path> (and its /api/v1 alias): every route
 * behind {@link OperatorGuard}, documented as the bearer-authenticated admin group.
 */
export function OperatorController(path = ''): ClassDecorator {
  return applyDecorators(
    ApiTags('admin'),
    ApiBearerAuth(),
    UseGuards(OperatorGuard),
    Controller(contractPaths(path === '' ? 'admin' : `admin/${path}`)),
  );
}

/** The operator {@link OperatorGuard} authenticated: the actor of the audit trail. */
export const Operator = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string => {
    const { operator } = context.switchToHttp().getRequest<OperatorRequest>();
    // Only reachable on a route that forgot the guard: fail loudly rather than audit nobody.
    if (!operator) throw new Error('@Operator() used on a route that is not behind OperatorGuard');
    return operator;
  },
);
