import { ROUTE_PREFIXES } from '@matchplane/contracts';

/** The controller paths of one resource under every prefix, for `@Controller(contractPaths('queue'))`. */
export function contractPaths(resource: string): string[] {
  const trimmed = resource.replace(/^\/+|\/+$/g, '');
  return ROUTE_PREFIXES.map((prefix) => (trimmed ? `${prefix}/${trimmed}` : prefix));
}
