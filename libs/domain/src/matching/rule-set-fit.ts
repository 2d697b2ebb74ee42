import {
  resolveTicketAttributes,
  type ModeAttributeSchema,
  type TicketAttributes,
} from './attribute-rules';
import type { MatchCandidate } from './match-candidate';
import type { ModeRules } from './mode-rules';

/**
 * A queued ticket under the rule set active now: it fits, with its attributes as that rule set
 * reads them (defaults of attributes declared since filled in), or it does not, and why.
 */
export type RuleSetFit =
  | {
      readonly fits: true;
      readonly attributes: TicketAttributes;
      /**
       * The rule set reads the ticket's own attributes as they are (nothing filled, dropped or
       * normalised): a caller may keep the ticket rather than copy it with `attributes`.
       */
      readonly unchanged: boolean;
    }
  | { readonly fits: false; readonly problem: string };

/**
 * Whether a ticket queued under an earlier rule set version fits `rules` and `schema` (the active
 * version's, for the ticket's mode): its party no larger than the mode's largest team, and its
 * attributes what the API would accept now, but for attributes the declaration no longer names,
 * which are ignored (dropping an attribute ends no ticket; no rule reads it any more). A ticket
 * that does not fit would never be matched as the rules now stand, or would be matched as a kind
 * the rules no longer have (docs/decisions/2026-12-07-queued-tickets-under-a-new-rule-set.md).
 */
export function ruleSetFit(
  candidate: Pick<MatchCandidate, 'attributes' | 'party'>,
  rules: ModeRules,
  schema: ModeAttributeSchema,
): RuleSetFit {
  const { party } = candidate;
  if (party && party.size > rules.teamSize) {
    return {
      fits: false,
      problem: `a party of ${party.size} no longer fits mode ${rules.mode}, whose teams now hold at most ${rules.teamSize}`,
    };
  }
  const declared = new Set(schema.attributes.map((attribute) => attribute.name));
  const given = Object.entries(candidate.attributes ?? {}).filter(([name]) => declared.has(name));
  const resolved = resolveTicketAttributes(schema, Object.fromEntries(given));
  if ('attributes' in resolved) {
    const { attributes } = resolved;
    return { fits: true, attributes, unchanged: sameAttributes(candidate.attributes, attributes) };
  }
  const problem = resolved.problems.map(({ message }) => message).join('; ');
  return { fits: false, problem: `the ticket no longer fits mode ${rules.mode}: ${problem}` };
}

/** Whether `own` holds exactly the names and values of `read` (a missing `own` does not). */
function sameAttributes(own: TicketAttributes | undefined, read: TicketAttributes): boolean {
  if (own === undefined) return false;
  const names = Object.keys(read);
  if (Object.keys(own).length !== names.length) return false;
  return names.every(
    (name) => Object.prototype.hasOwnProperty.call(own, name) && own[name] === read[name],
  );
}
