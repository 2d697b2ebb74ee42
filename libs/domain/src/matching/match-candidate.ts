/** What a matching pass takes and gives: candidates in, proposed matches and explanations out. */
import type { TicketAttributes } from './attribute-rules';
import type { UnmatchedTicket } from './unmatched-reason';

/** A searching ticket as the matcher sees it (see validCandidate for which tickets qualify). */
export interface MatchCandidate {
  readonly ticketId: string;
  readonly playerId: string;
  readonly mode: string;
  readonly rating: number;
  /**
   * The uncertainty (openskill sigma) behind `rating`, for team balance; absent reads as known
   * exactly (balance on `rating` alone).
   */
  readonly ratingSigma?: number;
  /** ms per region; entries that are not finite numbers >= 0 count as not measured. */
  readonly predictedRtt: Readonly<Record<string, number>>;
  readonly enqueuedAt: Date;
  /** The ticket's attributes (attribute-rules.ts), read by the mode's attribute rules; none: {}. */
  readonly attributes?: TicketAttributes;
  /** Set when the ticket is one member's of a party ticket: the party plays whole or not at all. */
  readonly party?: CandidateParty;
  /**
   * Players this one must never share a match with (issue 34 block lists): those it blocked and
   * those who blocked it (the matcher reads both directions). Absent: none.
   */
  readonly blockedPlayerIds?: readonly string[];
  /**
   * Players this one would rather not share a match with (avoid lists; both directions, as
   * blocks): a match puts them together only when its anchor's search fills none without them
   * (docs/decisions/2026-12-07-avoid-lists.md). Absent: none.
   */
  readonly avoidedPlayerIds?: readonly string[];
}

/** The party ticket a candidate belongs to: every member's candidate names the same one. */
export interface CandidateParty {
  /** The party ticket's id (one per enqueue of the party), shared by its members' tickets. */
  readonly id: string;
  /** How many players the party ticket has; all of them must be candidates for any to match. */
  readonly size: number;
}

export interface ProposedParticipant {
  readonly ticketId: string;
  readonly playerId: string;
  /** 0-based team index. */
  readonly team: number;
  readonly rating: number;
  /** This participant's predicted RTT to the match's region. */
  readonly rttMs: number;
  /** The party ticket of a party member (see {@link PartyRoster}): its party is all here, on this team. */
  readonly partyId?: string;
}

export interface ProposedMatch {
  readonly mode: string;
  readonly region: string;
  /** In roster order (team, then player id), as createMatch stores it. */
  readonly participants: readonly ProposedParticipant[];
  readonly worstRttMs: number;
  readonly sumRttMs: number;
  /** The ticket the match was formed for, whose widening step set the limits below. */
  readonly anchorTicketId: string;
  readonly maxRttMs: number;
  readonly ratingWindow: number;
}

export interface MatchFormation {
  /** In the order they were formed: by their anchor's age, oldest first. */
  readonly matches: readonly ProposedMatch[];
  /** Every candidate in no match, oldest first, each with why. */
  readonly unmatched: readonly UnmatchedTicket[];
}
