/** Every contract route is served under both prefixes (DESIGN.md "Routes"). */
export const ROUTE_PREFIXES = ['v1', 'api/v1'] as const;
