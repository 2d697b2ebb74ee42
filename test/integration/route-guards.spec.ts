import { GUARDS_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { PUBLIC_ROUTE } from '@matchplane/routing';
import { OperatorGuard } from '../../apps/api/src/admin/operator.guard';
import { RATE_LIMIT_SCOPES } from '../../apps/api/src/http/rate-limit.decorator';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** Every route of the API's real module graph has a guard or says why it is public. */
describe('API route guards', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({ OPERATOR_TOKENS: `ops=${'x'.repeat(32)}` });
  });
  afterAll(() => api.close());

  type Handler = (...args: unknown[]) => unknown;
  type ControllerClass = (new (...args: never[]) => unknown) & { name: string };

  /** Every route handler of the API's module graph with its controller. */
  function routes(): { controller: ControllerClass; name: string; handler: Handler }[] {
    const found: { controller: ControllerClass; name: string; handler: Handler }[] = [];
    for (const moduleRef of api.app.get(ModulesContainer).values()) {
      for (const wrapper of moduleRef.controllers.values()) {
        const controller = wrapper.metatype as ControllerClass | null;
        if (!controller) continue;
        const prototype = controller.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(prototype)) {
          const handler = prototype[name];
          if (name === 'constructor' || typeof handler !== 'function') continue;
          if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          found.push({ controller, name, handler: handler as Handler });
        }
      }
    }
    return found;
  }

  it('finds no route without a guard or a @PublicRoute reason', () => {
    const unguarded: string[] = [];
    const all = routes();
    for (const { controller, name, handler } of all) {
      const guarded = [handler, controller].some((target) => {
        const guards = Reflect.getMetadata(GUARDS_METADATA, target) as unknown[] | undefined;
        return (
          (guards?.length ?? 0) > 0 || typeof Reflect.getMetadata(PUBLIC_ROUTE, target) === 'string'
        );
      });
      if (!guarded) unguarded.push(`${controller.name}.${name}`);
    }
    expect(all.length).toBeGreaterThan(10);
    expect(unguarded).toEqual([]);
  });

  it('finds no player, server or public route outside every rate limit', () => {
    const unlimited: string[] = [];
    let checked = 0;
    for (const { controller, name, handler } of routes()) {
      const guards = [handler, controller].flatMap(
        (target) => (Reflect.getMetadata(GUARDS_METADATA, target) as unknown[] | undefined) ?? [],
      );
      // Operators hold their own tokens; /health and /metrics serve probes and scrapers.
      if (guards.includes(OperatorGuard) || controller.name === 'HealthController') continue;
      checked += 1;
      const scopes = [handler, controller].flatMap(
        (target) => (Reflect.getMetadata(RATE_LIMIT_SCOPES, target) as unknown[] | undefined) ?? [],
      );
      if (scopes.length === 0) unlimited.push(`${controller.name}.${name}`);
    }
    expect(checked).toBeGreaterThan(10);
    expect(unlimited).toEqual([]);
  });
});
