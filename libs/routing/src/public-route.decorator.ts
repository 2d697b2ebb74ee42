import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'matchplane:public-route';

/**
 * Marks a route (or controller) as deliberately reachable without a guard, saying why. A test
 * walks every API route and fails on one with neither a guard nor this mark.
 */
export const PublicRoute = (reason: string): MethodDecorator & ClassDecorator =>
  SetMetadata(PUBLIC_ROUTE, reason);
