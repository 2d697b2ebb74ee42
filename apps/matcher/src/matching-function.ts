import type { FactoryProvider, Provider } from '@nestjs/common';
import { formMatches, type MatchingFunction, type ModeRules } from '@matchplane/domain';

/**
 * The matching policy the matcher runs on each pass: formMatches unless a studio binds its own
 * (a replacement, or a wrapper around formMatches) through MatcherModule.forRoot or by
 * overriding this provider. Whatever it returns is screened and re-checked against PostgreSQL
 * before anything is committed, so a policy bug cannot double-book a ticket.
 */
export const MATCHING_FUNCTION = Symbol('MATCHING_FUNCTION');

/** The rules of every configured mode (from MatcherConfig), for the pass and the policy. */
export const MATCHER_RULES = Symbol('MATCHER_RULES');
export type MatcherRules = readonly ModeRules[];

/** A policy built from the studio's own providers (`inject` them from the modules in `imports`). */
export type MatchingFunctionFactory = Omit<FactoryProvider<MatchingFunction>, 'provide'>;

export function matchingFunctionProvider(
  policy?: MatchingFunction | MatchingFunctionFactory,
): Provider {
  if (policy === undefined) return { provide: MATCHING_FUNCTION, useValue: formMatches };
  if (typeof policy === 'function') return { provide: MATCHING_FUNCTION, useValue: policy };
  return { ...policy, provide: MATCHING_FUNCTION };
}
