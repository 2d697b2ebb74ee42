import { applyDecorators, Controller, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { RateLimit, RateLimitScope } from '../../http/rate-limit.decorator';
import { CONSOLE_PATH } from './console-session';
import { ConsoleErrorFilter } from './console.filter';
import { ConsoleGuard } from './console.guard';

/**
 * A controller of console pages behind a session (every one but the login's): left out of the
 * OpenAPI contract, its refusals rendered as pages, rate-limited as the console.
 */
export function ConsolePages(): ClassDecorator {
  return applyDecorators(
    ApiExcludeController(),
    UseGuards(ConsoleGuard),
    UseFilters(ConsoleErrorFilter),
    RateLimit(RateLimitScope.OPERATOR_CONSOLE),
    Controller(CONSOLE_PATH),
  );
}
