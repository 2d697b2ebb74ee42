import { applyDecorators, Controller, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { contractPaths } from '@matchplane/routing';
import { RateLimit, RateLimitScope } from '../http/rate-limit.decorator';
import { PlayerAuthGuard } from './player-auth.guard';

/**
 * A controller of player routes under /v1/<path> (and its /api/v1 alias): every route behind
 * {@link PlayerAuthGuard} and the per-player rate limit, documented under `tag` as bearer-authenticated.
 */
export function PlayerController(path: string, tag: string = path): ClassDecorator {
  return applyDecorators(
    ApiTags(tag),
    ApiBearerAuth(),
    UseGuards(PlayerAuthGuard),
    RateLimit(RateLimitScope.PLAYER),
    Controller(contractPaths(path)),
  );
}
