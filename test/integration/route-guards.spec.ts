import { GUARDS_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { PUBLIC_ROUTE } from '@matchplane/contracts';
import { startPlayerApi, type PlayerApi } from '../support/player-api';

/** Every route of the API's real module graph has a guard or says why it is public. */
describe('API route guards', () => {
  let api: PlayerApi;
  beforeAll(async () => {
    api = await startPlayerApi({ OPERATOR_TOKENS: `ops=${'x'.repeat(32)}` });
  });
  afterAll(() => api.close());

  it('finds no route without a guard or a @PublicRoute reason', () => {
    const unguarded: string[] = [];
    let routes = 0;
    for (const moduleRef of api.app.get(ModulesContainer).values()) {
      for (const wrapper of moduleRef.controllers.values()) {
        const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
        if (!controller) continue;
        const prototype = controller.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(prototype)) {
          const handler = prototype[name];
          if (name === 'constructor' || typeof handler !== 'function') continue;
          if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
          routes += 1;
          const guarded = [handler, controller].some((target) => {
            const guards = Reflect.getMetadata(GUARDS_METADATA, target) as unknown[] | undefined;
            return (
              (guards?.length ?? 0) > 0 ||
              typeof Reflect.getMetadata(PUBLIC_ROUTE, target) === 'string'
            );
          });
          if (!guarded) unguarded.push(`${controller.name}.${name}`);
        }
      }
    }
    expect(routes).toBeGreaterThan(10);
    expect(unguarded).toEqual([]);
  });
});
