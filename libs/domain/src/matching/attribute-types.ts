/*
 * Ticket attributes and the rules over them (issue 13 item 3, issue 34 item 2). A mode declares
 * which attributes a ticket may carry (a string from a list of allowed values, a number within a
 * range, or a set of allowed strings) and rules over them: `equal` (only tickets with the same
 * value meet: build version), `distance` (a numeric attribute within a distance of the anchor's
 * that widens with the anchor's wait, as its RTT ceiling and rating window do) and `intersect` (a
 * set attribute: every player of a match shares at least one value, as cross-play pools do). An
 * `equal` or `intersect` rule may be `optionalAfterMs`: a match whose anchor (its oldest ticket)
 * has waited that long is formed regardless of it.
 */

export type AttributeValue = string | number | readonly string[];
/** A ticket's attributes by name; always an object (never null), every declared one present. */
export type TicketAttributes = Readonly<Record<string, AttributeValue>>;

/** A string attribute: one of `values`. Without `default` it is required. */
export interface StringAttributeDeclaration {
  readonly name: string;
  readonly type: 'string';
  readonly values: readonly string[];
  readonly default?: string;
}

/** A numeric attribute within [min, max] (an integer when `integer`). Without `default` it is required. */
export interface NumberAttributeDeclaration {
  readonly name: string;
  readonly type: 'number';
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
  readonly default?: number;
}

/**
 * A set attribute: a non-empty list of distinct strings from `values` (stored in declared order),
 * such as the platforms a player accepts to play with. Without `default` it is required.
 */
export interface SetAttributeDeclaration {
  readonly name: string;
  readonly type: 'set';
  readonly values: readonly string[];
  readonly default?: readonly string[];
}

export type AttributeDeclaration =
  StringAttributeDeclaration | NumberAttributeDeclaration | SetAttributeDeclaration;

/** Only tickets whose values of `attribute` are equal meet in a match (until `optionalAfterMs`). */
export interface EqualRule {
  readonly kind: 'equal';
  readonly attribute: string;
  /** From this wait of a match's anchor on, the rule no longer applies to that match. */
  readonly optionalAfterMs?: number;
}

/** Every player of a match holds one value in common in the set `attribute` (until `optionalAfterMs`). */
export interface IntersectRule {
  readonly kind: 'intersect';
  readonly attribute: string;
  readonly optionalAfterMs?: number;
}

/** From `afterMs` of the anchor's wait on, partners may be at most `maxDistance` away from it. */
export interface DistanceStep {
  readonly afterMs: number;
  /** Inclusive; Infinity means any distance. */
  readonly maxDistance: number;
}

/** A numeric attribute within a distance of the anchor's value that widens with its wait. */
export interface DistanceRule {
  readonly kind: 'distance';
  readonly attribute: string;
  /** Sorted by afterMs, the first at 0; only widens. */
  readonly widening: readonly DistanceStep[];
}

/**
 * Role slots (mode shapes): each team holds, for each role of `perTeam`, at least that many
 * players who can play it (one role each), read from the set `attribute` of each player's ticket,
 * until the match's anchor has waited `optionalAfterMs`.
 */
export interface RoleRule {
  readonly kind: 'roles';
  readonly attribute: string;
  readonly perTeam: Readonly<Record<string, number>>;
  readonly optionalAfterMs?: number;
}

export type AttributeRule = EqualRule | DistanceRule | IntersectRule | RoleRule;

/** What one mode declares: its attributes and the rules over them. */
export interface ModeAttributeSchema {
  readonly attributes: readonly AttributeDeclaration[];
  readonly rules: readonly AttributeRule[];
}
