/** Every contract route is served under both prefixes (DESIGN.md "Routes"). */
export const ROUTE_PREFIXES = ['v1', 'api/v1'] as const;

/** The controller paths of one resource under every prefix, for `@Controller(contractPaths('queue'))`. */
export function contractPaths(resource: string): string[] {
  const trimmed = resource.replace(/^\/+|\/+$/g, '');
  return ROUTE_PREFIXES.map((prefix) => (trimmed ? `${prefix}/${trimmed}` : prefix));
}
