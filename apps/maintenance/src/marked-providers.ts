import type { DiscoveryService, Reflector } from '@nestjs/core';

/**
 * The instances of every provider whose class carries `key` (a `SetMetadata` decorator), each once:
 * how the maintenance app finds what the owning modules contribute. Call it once providers exist
 * (at module init or later), or some instances may still be placeholders.
 */
export function providersMarkedWith<T>(
  discovery: DiscoveryService,
  reflector: Reflector,
  key: symbol,
): T[] {
  const found = new Set<T>();
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (!instance || typeof instance !== 'object') continue;
    const metatype: unknown =
      !wrapper.metatype || wrapper.inject ? instance.constructor : wrapper.metatype;
    if (typeof metatype !== 'function') continue;
    if (reflector.get<boolean | undefined>(key, metatype)) found.add(instance as T);
  }
  return [...found];
}
